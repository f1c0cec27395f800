import { describe, expect, it } from 'vitest';
import type { SessionMeter } from '../metrics/transport-metrics.js';
import type { Conn } from './connection.js';
import { DirectTopics } from './topics.js';

/** A socket state with a meter; its uWS socket only records topic (un)subscriptions. */
function conn(): Conn & { meter: SessionMeter; subscribed: Set<string> } {
  const subscribed = new Set<string>();
  const ws = { subscribe: (t: string) => subscribed.add(t), unsubscribe: (t: string) => subscribed.delete(t), getBufferedAmount: () => 0 };
  const meter = { info: {}, frames: 0, bytes: 0, messages: 0, queuedBytes: () => 0 } as unknown as SessionMeter;
  return { ws, meter, closed: false, topics: undefined, subscribed } as unknown as Conn & { meter: SessionMeter; subscribed: Set<string> };
}

/** Ends an interval as the transport does: settles only when the interval is listed, reads and resets the meter. */
function endInterval(topics: DirectTopics, c: { meter: SessionMeter }, listed: boolean): { messages: number; bytes: number } | undefined {
  if (listed) topics.settleAll();
  const seen = listed ? { messages: c.meter.messages, bytes: c.meter.bytes } : undefined;
  c.meter.frames = 0;
  c.meter.messages = 0;
  c.meter.bytes = 0;
  topics.roll();
  return seen;
}

describe('DirectTopics', () => {
  it('settles into a listed interval exactly what that interval carried, whatever intervals went unlisted before', () => {
    const topics = new DirectTopics(1 << 20);
    const c = conn();
    topics.subscribe(c, 5);
    topics.subscribe(c, 9);
    for (let i = 0; i < 3; i++) topics.published(5, 10);
    expect(endInterval(topics, c, true)).toEqual({ messages: 3, bytes: 30 });
    // two intervals nobody lists: nothing settles
    for (let i = 0; i < 4; i++) topics.published(5, 10);
    endInterval(topics, c, false);
    topics.published(9, 7);
    endInterval(topics, c, false);
    // the next listed interval counts its own messages only
    topics.published(5, 10);
    topics.published(9, 7);
    topics.published(9, 7);
    expect(endInterval(topics, c, true)).toEqual({ messages: 3, bytes: 24 });
    // a topic quiet for several intervals counts nothing from before them
    expect(endInterval(topics, c, true)).toEqual({ messages: 0, bytes: 0 });
  });

  it('counts from the subscription on, and an unsubscribe settles the interval so far', () => {
    const topics = new DirectTopics(1 << 20);
    const a = conn();
    const b = conn();
    topics.subscribe(a, 3);
    topics.published(3, 10);
    endInterval(topics, a, false);
    topics.published(3, 10);
    // b joins mid-interval: the message before it is not its
    topics.subscribe(b, 3);
    expect(b.subscribed.has('3')).toBe(true);
    topics.published(3, 10);
    topics.published(3, 10);
    // a leaves: its meter has this interval's three (not the unlisted interval's one)
    topics.unsubscribe(a, 3);
    expect(a.meter.messages).toBe(3);
    expect(a.subscribed.has('3')).toBe(false);
    topics.published(3, 10);
    topics.settleAll();
    expect(a.meter.messages).toBe(3);
    expect(b.meter).toMatchObject({ messages: 3, frames: 3, bytes: 30 });
  });

  it('keeps the counts of record ids past its initial capacity', () => {
    const topics = new DirectTopics(1 << 20);
    const c = conn();
    topics.subscribe(c, 5000);
    endInterval(topics, c, true);
    topics.published(5000, 12);
    topics.published(70_000, 12);
    expect(endInterval(topics, c, true)).toEqual({ messages: 1, bytes: 12 });
  });
});
