import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeClientMessage, decodeServerFrame, decodeSourceFrame, decodeSourceMessage } from './decode.js';
import { encodeClientMessage, encodeServerFrame, encodeSourceFrame, encodeSourceMessage } from './encode.js';
import type { ClientMessage, SourceMessage } from './messages.js';
import { isDecodeFailure, toErrorMessage } from './result.js';

// docs/protocol.md examples are checked like golden frames, so the page cannot drift from the code
const doc = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/```(json (?:client|server|source-message|source)|transcript)\n([\s\S]*?)```/g)];

// `json source` blocks are publish frames; `json source-message` blocks single-object source frames
type Example = [string, 'client' | 'server' | 'source' | 'source-message', string];
const examples: Example[] = [];
for (const [, info, body] of blocks) {
  if (info === 'transcript') {
    for (const line of body!.split('\n')) {
      if (line.startsWith('-> ')) examples.push([`transcript: ${line.slice(3, 60)}`, 'client', line.slice(3)]);
      else if (line.startsWith('<- ')) examples.push([`transcript: ${line.slice(3, 60)}`, 'server', line.slice(3)]);
      else if (line !== '' && !line.startsWith('#')) throw new Error(`transcript line must start with ->, <- or #: ${line}`);
    }
  } else {
    examples.push([`${info}: ${body!.trim().slice(0, 60)}`, info!.slice(5) as Example[1], body!.trim()]);
  }
}

function roundTrip(direction: Example[1], frame: string): string {
  switch (direction) {
    case 'client': {
      const m = decodeClientMessage(frame);
      if (isDecodeFailure(m)) throw new Error(m.error.message);
      return encodeClientMessage(m as ClientMessage);
    }
    case 'source': {
      const ms = decodeSourceFrame(frame);
      if (isDecodeFailure(ms)) throw new Error(ms.error.message);
      return encodeSourceFrame(ms);
    }
    case 'source-message': {
      const m = decodeSourceMessage(frame);
      if (isDecodeFailure(m)) throw new Error(m.error.message);
      return encodeSourceMessage(m as SourceMessage);
    }
    case 'server':
      return encodeServerFrame(decodeServerFrame(frame));
  }
}

describe('docs/protocol.md examples', () => {
  it('has examples for every message type and a transcript', () => {
    expect(examples.length).toBeGreaterThan(20);
    for (const type of ['session.login', 'session.loggedIn', 'session.ping', 'session.pong', 'record.subscribe',
      'record.subscribed', 'record.unsubscribe', 'record.unsubscribed', 'record.image', 'record.update', 'record.publish', 'error',
      'admin.subscribe', 'admin.subscribed', 'admin.metrics', 'admin.unsubscribe', 'admin.unsubscribed',
      'order.submit', 'order.cancel', 'order.amend', 'order.ack', 'order.reject']) {
      expect(examples.some(([, , frame]) => frame.includes(`"type":"${type}"`)), type).toBe(true);
    }
  });

  const valid = examples.filter(([, direction, frame]) => direction !== 'client' || !isDecodeFailure(decodeClientMessage(frame)));
  it.each(valid)('%s decodes and re-encodes byte for byte', (_, direction, frame) => {
    expect(roundTrip(direction, frame)).toBe(frame);
  });

  it('answers each invalid client line of the transcript with exactly the error the decoder gives', () => {
    let checked = 0;
    examples.forEach(([, direction, frame], i) => {
      const m = direction === 'client' ? decodeClientMessage(frame) : undefined;
      if (!isDecodeFailure(m)) return;
      expect(examples[i + 1]?.[2]).toBe(encodeServerFrame([toErrorMessage(m.error)]));
      checked++;
    });
    expect(checked).toBeGreaterThan(0);
  });
});
