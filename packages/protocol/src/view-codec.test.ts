import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeClientMessage, decodeServerFrame, decodeSourceMessage } from './decode.js';
import { encodeServerFrame, encodeSourceMessage } from './encode.js';
import type { ContainerPublish, ViewClientMessage, ViewServerMessage } from './messages.js';
import { VIEW_CLIENT_MESSAGE_TYPES, VIEW_SERVER_MESSAGE_TYPES } from './messages.js';
import { isDecodeFailure } from './result.js';
import { decodeContainerPublish, decodeViewRequest, encodeContainerPublish, encodeViewFrame, encodeViewRequest } from './view-codec.js';

interface Vector {
  name: string;
  direction: 'server' | 'client' | 'source';
  note: string;
  frame: string;
  messages?: unknown[];
  error?: { code: string; field?: string; reqId?: number };
}

// Golden frames of the container and view messages; the Rust encoder is held to the server ones.
const vectors = JSON.parse(readFileSync(new URL('../vectors/views.json', import.meta.url), 'utf8')) as Vector[];
const valid = vectors.filter((v) => v.messages !== undefined);
const invalid = vectors.filter((v) => v.error !== undefined);

describe('view golden frames', () => {
  it('are well-formed, uniquely named and cover every view message type', () => {
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    for (const v of vectors) expect((v.messages === undefined) !== (v.error === undefined)).toBe(true);
    const types = new Set(valid.flatMap((v) => (v.messages as { type: string }[]).map((m) => m.type)));
    for (const t of [...VIEW_CLIENT_MESSAGE_TYPES, ...VIEW_SERVER_MESSAGE_TYPES, 'container.publish']) expect(types.has(t), t).toBe(true);
    expect(invalid.length).toBeGreaterThanOrEqual(20);
  });

  it.each(valid.map((v) => [v.name, v] as const))('%s decodes to its messages and encodes to its frame', (_, v) => {
    switch (v.direction) {
      case 'client':
        expect(decodeViewRequest(v.frame)).toEqual(v.messages![0]);
        expect(encodeViewRequest(v.messages![0] as ViewClientMessage)).toBe(v.frame);
        break;
      case 'source':
        expect(decodeContainerPublish(v.frame)).toEqual(v.messages![0]);
        expect(encodeContainerPublish(v.messages![0] as ContainerPublish)).toBe(v.frame);
        break;
      case 'server':
        expect(JSON.parse(v.frame)).toEqual(v.messages);
        expect(encodeViewFrame(v.messages as ViewServerMessage[])).toBe(v.frame);
        break;
    }
  });

  it.each(invalid.map((v) => [v.name, v] as const))('%s is rejected with its code, field and reqId', (_, v) => {
    const result = v.direction === 'client' ? decodeViewRequest(v.frame) : decodeContainerPublish(v.frame);
    expect(isDecodeFailure(result)).toBe(true);
    if (!isDecodeFailure(result)) return;
    expect(result.error.code).toBe(v.error!.code);
    expect(result.error.field).toBe(v.error!.field);
    expect(result.error.reqId).toBe(v.error!.reqId);
    expect(result.error.message.length).toBeGreaterThan(0);
  });
});

describe('view codec', () => {
  it('writes the canonical key order whatever order the caller built', () => {
    const m = { window: { size: 5, offset: 1 }, sort: [{ dir: 'desc', field: 'bid' }], container: '/C', reqId: 1, type: 'view.create' } as const;
    expect(encodeViewRequest(m)).toBe('{"type":"view.create","reqId":1,"container":"/C","sort":[{"field":"bid","dir":"desc"}],"window":{"offset":1,"size":5}}');
  });

  it('leaves out empty diff lists and a false conflated flag', () => {
    const frame = encodeViewFrame([{ type: 'view.rows', reqId: 1, viewId: 2, left: [], moved: [], entered: [], updated: [{ id: 3, seq: 1, ts: 5, fields: { a: 1 }, conflated: false }] }]);
    expect(frame).toBe('[{"type":"view.rows","reqId":1,"viewId":2,"updated":[{"id":3,"seq":1,"ts":5,"fields":{"a":1}}]}]');
  });

  it('names the message in the error of a window out of range', () => {
    const r = decodeViewRequest('{"type":"view.create","reqId":4,"container":"/C","window":{"offset":0,"size":10001}}');
    expect(isDecodeFailure(r) && r.error.message).toBe("'window.size' (10001) must be an integer 1..10000");
  });

  it('rejects a frame that is not one object, and a view request in a container decoder', () => {
    expect(isDecodeFailure(decodeViewRequest('[]')) && decodeViewRequest('[]')).toMatchObject({ error: { code: 'BAD_FRAME' } });
    expect(decodeContainerPublish('{"type":"view.close","reqId":1,"viewId":1}')).toMatchObject({ error: { code: 'UNKNOWN_TYPE' } });
  });

  it('is admitted on /stream and /source with the same result as the view decoders', () => {
    for (const v of vectors.filter((x) => x.direction === 'client')) {
      const [a, b] = [decodeClientMessage(v.frame), decodeViewRequest(v.frame)];
      if (!isDecodeFailure(b)) expect(a).toEqual(b);
      else if (isDecodeFailure(a)) expect([a.error.code, a.error.field, a.error.reqId]).toEqual([b.error.code, b.error.field, b.error.reqId]);
      else expect.fail(`${v.name} must fail on /stream too`);
    }
    for (const v of valid.filter((x) => x.direction === 'source')) {
      expect(decodeSourceMessage(v.frame)).toEqual(v.messages![0]);
      expect(encodeSourceMessage(v.messages![0] as ContainerPublish)).toBe(v.frame);
    }
    for (const v of valid.filter((x) => x.direction === 'server')) {
      expect(decodeServerFrame(v.frame)).toEqual(v.messages);
      expect(encodeServerFrame(v.messages as ViewServerMessage[])).toBe(v.frame);
    }
  });
});

describe('docs/protocol.md view examples', () => {
  const doc = readFileSync(new URL('../../../docs/protocol.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```json view-(client|server|source)\n([\s\S]*?)```/g)].map(([, dir, body]) => [dir!, body!.trim()] as const);

  it('has an example of every view message type', () => {
    for (const t of [...VIEW_CLIENT_MESSAGE_TYPES, ...VIEW_SERVER_MESSAGE_TYPES, 'container.publish']) {
      expect(blocks.some(([, b]) => b.includes(`"type":"${t}"`)), t).toBe(true);
    }
  });

  it.each(blocks.map(([dir, body]) => [`${dir}: ${body.slice(0, 60)}`, dir, body] as const))('%s decodes and re-encodes byte for byte', (_, dir, body) => {
    if (dir === 'client') {
      const m = decodeViewRequest(body);
      expect(isDecodeFailure(m)).toBe(false);
      expect(encodeViewRequest(m as ViewClientMessage)).toBe(body);
    } else if (dir === 'source') {
      const m = decodeContainerPublish(body);
      expect(isDecodeFailure(m)).toBe(false);
      expect(encodeContainerPublish(m as ContainerPublish)).toBe(body);
    } else {
      expect(encodeViewFrame(JSON.parse(body) as ViewServerMessage[])).toBe(body);
    }
  });
});
