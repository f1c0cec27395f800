import { describe, expect, it } from 'vitest';
import { OrderBatch, hasOrderFrames, type OrderFramesPort } from './order-batch.js';

/** Records each engine call as (session, frame text) pairs; throws when `fail` is set. */
class FakeEngine implements OrderFramesPort {
  calls: Array<Array<[number, string]>> = [];
  fail: Error | undefined;
  orderSubmitFrames(sessions: Uint32Array, data: Uint8Array, index: Uint32Array): void {
    if (this.fail) throw this.fail;
    expect(index.length).toBe(sessions.length * 2);
    this.calls.push(Array.from(sessions, (sid, i) => [sid, Buffer.from(data.subarray(index[2 * i]!, index[2 * i]! + index[2 * i + 1]!)).toString('utf8')]));
  }
}

function rig() {
  const engine = new FakeEngine();
  const turns: Array<() => void> = [];
  const failures: Array<[string, string, string]> = [];
  const batch = new OrderBatch<string>(engine, (owner, frame, err) => failures.push([owner, Buffer.from(frame).toString('utf8'), String(err)]), (f) => turns.push(f));
  const endTurn = (): void => {
    for (const f of turns.splice(0)) f();
  };
  return { engine, batch, turns, failures, endTurn };
}

const bytes = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));

describe('OrderBatch', () => {
  it('sends one turn of frames as one engine call, in order, and schedules once per turn', () => {
    const { engine, batch, turns, endTurn } = rig();
    batch.add(1, bytes('a'), 'o1');
    batch.add(2, bytes('bb'), 'o2');
    batch.add(1, bytes('ccc'), 'o1');
    expect(turns.length).toBe(1);
    expect(engine.calls).toEqual([]);
    expect(batch.size).toBe(3);
    endTurn();
    expect(engine.calls).toEqual([[[1, 'a'], [2, 'bb'], [1, 'ccc']]]);
    expect(batch.size).toBe(0);
    batch.add(3, bytes('d'), 'o3');
    expect(turns.length).toBe(1);
    endTurn();
    expect(engine.calls).toEqual([[[1, 'a'], [2, 'bb'], [1, 'ccc']], [[3, 'd']]]);
  });

  it('an early flush (another command of the turn) sends what is pending; the scheduled one then sends nothing', () => {
    const { engine, batch, endTurn } = rig();
    batch.flush();
    expect(engine.calls).toEqual([]);
    batch.add(1, bytes('x'), 'o');
    batch.flush();
    expect(engine.calls).toEqual([[[1, 'x']]]);
    endTurn();
    expect(engine.calls.length).toBe(1);
  });

  it('copies the frame (the caller may reuse its buffer) and grows past its first capacity', () => {
    const { engine, batch, endTurn } = rig();
    const reused = bytes('zzzz');
    const big = 'y'.repeat(40_000);
    for (let i = 0; i < 600; i++) {
      reused.set(bytes(String(i % 10).repeat(4)));
      batch.add(i, i % 200 === 0 ? bytes(big) : reused, 'o');
    }
    endTurn();
    expect(engine.calls.length).toBe(1);
    const call = engine.calls[0]!;
    expect(call.length).toBe(600);
    call.forEach(([sid, text], i) => {
      expect(sid).toBe(i);
      expect(text).toBe(i % 200 === 0 ? big : String(i % 10).repeat(4));
    });
  });

  it('tells the owner of every frame, in order, when the engine refuses the batch; the next batch starts empty', () => {
    const { engine, batch, failures, endTurn } = rig();
    engine.fail = new Error('UNAVAILABLE: engine 1 is shut down');
    batch.add(1, bytes('first'), 'a');
    batch.add(2, bytes('second'), 'b');
    endTurn();
    expect(failures).toEqual([
      ['a', 'first', 'Error: UNAVAILABLE: engine 1 is shut down'],
      ['b', 'second', 'Error: UNAVAILABLE: engine 1 is shut down'],
    ]);
    engine.fail = undefined;
    batch.add(3, bytes('third'), 'c');
    endTurn();
    expect(engine.calls).toEqual([[[3, 'third']]]);
  });

  it('hasOrderFrames tells an engine with orderSubmitFrames from one without', () => {
    expect(hasOrderFrames(new FakeEngine())).toBe(true);
    expect(hasOrderFrames({ orderSubmit() {} })).toBe(false);
  });
});
