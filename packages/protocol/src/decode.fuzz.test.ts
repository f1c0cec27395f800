/**
 * Fuzzing the decoders of untrusted input (docs/security.md, "Fuzzing"): random strings, random JSON
 * values and mutations of the golden frames (byte flips, truncation, deep nesting, huge numbers,
 * unicode, duplicate keys). `decodeClientMessage`, `decodeSourceMessage` and `decodeSourceFrame`
 * must never throw and must return a typed `DecodeFailure`; `decodeServerFrame` may only throw
 * its documented `ProtocolError`.
 *
 * Short run (part of `npx vitest run`): SHORT_RUNS inputs per decoder and generator.
 * Long run, on demand (numbers recorded in docs/security.md):
 *   FUZZ_RUNS=1000000 npx vitest run packages/protocol -t fuzz
 *
 * Differential (TS vs the Rust engine's `wire::decode_source_frame`): fuzz/source-frames.corpus.json
 * holds seeded mutations of the golden frames with the TS verdict (accept + count, or code, field,
 * index); this test checks TS still gives them, packages/engine/tests/fuzz_differential.rs checks
 * Rust gives the same. Regenerate (or write a bigger corpus for the Rust example harness) with
 *   FUZZ_CORPUS_OUT=packages/protocol/fuzz/source-frames.corpus.json FUZZ_CORPUS_SIZE=2000 \
 *     npx vitest run packages/protocol -t corpus
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from './codes.js';
import { decodeClientMessage, decodeServerFrame, decodeSourceFrame, decodeSourceMessage } from './decode.js';
import { ProtocolError, isDecodeFailure } from './result.js';

const SHORT_RUNS = 1500;
// Why process.env here: the long run is selected on the command line, and this test is not
// server code (the config.ts rule is about the server's settings).
const RUNS = Number(process.env.FUZZ_RUNS ?? SHORT_RUNS);
const LONG = RUNS > SHORT_RUNS;
// A long run of a million inputs per decoder needs minutes, not the default test timeout.
const TIMEOUT_MS = LONG ? 3_600_000 : 30_000;

interface Vector {
  direction: 'client' | 'server' | 'source';
  frame: string;
}

// frames.json (sessions, records, orders) and views.json (containers and views): without the
// latter, view and container.publish requests were only reached by rare mutations of `type`
function readVectors(file: string): Vector[] {
  return JSON.parse(readFileSync(new URL(`../vectors/${file}`, import.meta.url), 'utf8')) as Vector[];
}
const vectors = [...readVectors('frames.json'), ...readVectors('views.json')];
/** Every golden frame: each decoder is fed every direction's frames, mutated. */
const golden = vectors.map((v) => v.frame);

/** Snippets that stress a JSON decoder when spliced into a frame. */
const SNIPPETS = [
  '1e999', '-1e999', '1e-400', '-0', '9007199254740993', '18446744073709551616', '1' + '0'.repeat(400),
  '"\\ud800"', '"\\udfff\\ud800"', '"\u0000"', '"é€𝄞"', '"\\u0000"', '\u2028', '\uFEFF', '\uD83D',
  '"__proto__":{"x":1},', '"constructor":1,', '"type":"record.publish",', '"fields":{"a":1,"a":2},',
  '{', '}', '[', ']', ',', ':', '"', '\\', 'null', 'true', 'nan', 'Infinity', '"a":', '[]', '{}',
];

/** One edit of a frame's text; positions are fractions of the current length. */
type Mutation =
  | { kind: 'flip'; at: number; char: string }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'nest'; at: number; depth: number; open: '[' | '{"a":' }
  | { kind: 'duplicate'; at: number; len: number }
  | { kind: 'json'; path: number; value: unknown };

const at = fc.double({ min: 0, max: 1, noNaN: true });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at, char: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at }),
  fc.record({ kind: fc.constant('insert' as const), at, text: fc.oneof(fc.constantFrom(...SNIPPETS), fc.string({ unit: 'grapheme', maxLength: 8 })) }),
  fc.record({ kind: fc.constant('delete' as const), at, len: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ kind: fc.constant('nest' as const), at, depth: fc.integer({ min: 1, max: 3000 }), open: fc.constantFrom('[' as const, '{"a":' as const) }),
  fc.record({ kind: fc.constant('duplicate' as const), at, len: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant('json' as const), path: fc.nat(), value: fc.jsonValue({ maxDepth: 3 }) }),
);

const pos = (text: string, f: number): number => Math.min(text.length, Math.floor(f * (text.length + 1)));

/**
 * Replaces the `path`-th value (in pre-order, within the first 64 levels) of a parsed frame; the
 * text is kept when it does not parse or is too deep to print again.
 */
function replaceValue(text: string, path: number, value: unknown): string {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return text;
  }
  const slots: Array<[Record<string, unknown> | unknown[], string | number]> = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64) return;
    if (Array.isArray(v)) v.forEach((x, i) => (slots.push([v, i]), walk(x, depth + 1)));
    else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) (slots.push([o, k]), walk(o[k], depth + 1));
    }
  };
  walk(root, 0);
  if (slots.length === 0) return JSON.stringify(value);
  const [parent, key] = slots[path % slots.length];
  (parent as Record<string | number, unknown>)[key] = value;
  try {
    return JSON.stringify(root);
  } catch {
    return text; // nested deeper than JSON.stringify's stack allows
  }
}

/** Applies one mutation (pure, deterministic). */
function mutate(text: string, m: Mutation): string {
  const i = 'at' in m ? pos(text, m.at) : 0;
  switch (m.kind) {
    case 'flip':
      return text.slice(0, i) + m.char + text.slice(i + 1);
    case 'truncate':
      return text.slice(0, i);
    case 'insert':
      return text.slice(0, i) + m.text + text.slice(i);
    case 'delete':
      return text.slice(0, i) + text.slice(i + m.len);
    case 'nest': {
      const close = m.open === '[' ? ']' : '}';
      return text.slice(0, i) + m.open.repeat(m.depth) + '1' + close.repeat(m.depth) + text.slice(i);
    }
    case 'duplicate':
      return text.slice(0, i + m.len) + text.slice(i, i + m.len) + text.slice(i + m.len);
    case 'json':
      return replaceValue(text, m.path, m.value);
  }
}

/** Values that sit on the decoders' rules and limits. */
const edgeValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>(
    1e300, -0, 8.64e15, 8.64e15 + 2, -8.64e15, 1.5, 2 ** 53 + 2, '', '/A', '/A/', '//A', '/A B', `/${'a'.repeat(256)}`,
    'é'.repeat(2048), 'é'.repeat(2049), '\ud800', 'record.publish', 'session.login', 'number', 'string', 'bool',
    'timestamp', true, null, {}, [], { a: 1 }, { '1': 1, a: {} }, { _a: 1, b2: 'x' },
  ),
);
const KEYS = ['type', 'subject', 'ts', 'image', 'fields', 'types', 'x', '1', '__proto__', 'bid', 'a'];
/** Mutations that mostly keep the frame JSON, so the rules past the parser get exercised. */
const semanticMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('json' as const), path: fc.nat(), value: edgeValue }) },
  {
    weight: 2,
    arbitrary: fc
      .record({ n: fc.nat(), key: fc.constantFrom(...KEYS), value: edgeValue })
      .map(({ n, key, value }) => ({ kind: 'json' as const, path: n, value: { [key]: value } })),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('insert' as const), at, text: fc.constantFrom(...KEYS.map((k) => `"${k}":1,`), '"a":"\\ud800",', '"b":[[1]],') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('nest' as const), at, depth: fc.integer({ min: 100, max: 160 }), open: fc.constantFrom('[' as const, '{"a":' as const) }) },
  { weight: 1, arbitrary: mutation },
);

/** `frames` with 1..4 mutations of any kind applied. */
function mutatedFrom(frames: readonly string[]): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...frames), fc.array(mutation, { minLength: 1, maxLength: 4 }))
    .map(([frame, ms]) => ms.reduce(mutate, frame));
}

/** Golden frames (every direction, records and views) with 1..4 mutations of any kind applied. */
const mutatedFrame: fc.Arbitrary<string> = mutatedFrom(golden);

/**
 * Every generator: random strings (UTF-16 with lone surrogates), random JSON values, golden
 * frames mutated at random, and golden frames of the decoder's own direction mutated mostly
 * in ways that keep them JSON (so the rules after the parser run, and some frames pass).
 */
function inputs(direction: Vector['direction']): fc.Arbitrary<string> {
  const own = vectors.filter((v) => v.direction === direction).map((v) => v.frame);
  return fc.oneof(
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
    fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }).map((v) => JSON.stringify(v)),
    mutatedFrame,
    fc
      .tuple(fc.constantFrom(...own), fc.array(semanticMutation, { minLength: 0, maxLength: 2 }))
      .map(([frame, ms]) => ms.reduce(mutate, frame)),
  );
}

const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** A decoder's result is either a value without `ok`, or a failure with a known code and a message. */
function expectTyped(result: unknown): void {
  if (!isDecodeFailure(result)) return;
  expect(CODES.has(result.error.code)).toBe(true);
  expect(result.error.code).not.toBe('INTERNAL');
  expect(typeof result.error.message).toBe('string');
  expect(result.error.message.length).toBeGreaterThan(0);
}

/** Runs `decode` over RUNS inputs; a long run prints inputs, time, rejections and the slowest call. */
function fuzz(name: string, direction: Vector['direction'], decode: (text: string) => unknown): void {
  let slowest = 0;
  let failures = 0;
  const started = performance.now();
  fc.assert(
    fc.property(inputs(direction), (text) => {
      const t0 = performance.now();
      const r = decode(text);
      const dt = performance.now() - t0;
      if (dt > slowest) slowest = dt;
      if (isDecodeFailure(r)) failures++;
      expectTyped(r);
    }),
    { numRuns: RUNS, seed: LONG ? undefined : 6 },
  );
  if (LONG) {
    const s = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`fuzz ${name}: ${RUNS} inputs in ${s} s, ${failures} rejected, slowest ${slowest.toFixed(2)} ms`);
  }
}

describe('decoder fuzz', () => {
  it('decodeClientMessage never throws and fails typed', { timeout: TIMEOUT_MS }, () => fuzz('decodeClientMessage', 'client', decodeClientMessage));
  it('decodeSourceMessage never throws and fails typed', { timeout: TIMEOUT_MS }, () => fuzz('decodeSourceMessage', 'source', decodeSourceMessage));
  it('decodeSourceFrame never throws and fails typed', { timeout: TIMEOUT_MS }, () => fuzz('decodeSourceFrame', 'source', decodeSourceFrame));
  it('decodeServerFrame throws only ProtocolError (BAD_FRAME / UNKNOWN_TYPE)', { timeout: TIMEOUT_MS }, () =>
    fuzz('decodeServerFrame', 'server', (text) => {
      try {
        return decodeServerFrame(text);
      } catch (e) {
        expect(e).toBeInstanceOf(ProtocolError);
        expect(['BAD_FRAME', 'UNKNOWN_TYPE']).toContain((e as ProtocolError).code);
        return { ok: false, error: { code: (e as ProtocolError).code, message: (e as ProtocolError).message } };
      }
    }),
  );

  it('mutations reach every decoder outcome (the generator is not stuck on parse errors)', () => {
    const codes = new Set<string>();
    let accepted = 0;
    // frames.json only, with a seed under which 2 of the 3000 mutations pass (a new vector in
    // frames.json changes the sample: pick another such seed); the check is about the generator
    for (const text of fc.sample(mutatedFrom(readVectors('frames.json').map((v) => v.frame)), { numRuns: 3000, seed: 12 })) {
      const r = decodeSourceFrame(text);
      if (isDecodeFailure(r)) codes.add(r.error.code);
      else accepted++;
    }
    expect([...codes].sort()).toEqual(['BAD_FRAME', 'BAD_REQUEST', 'UNKNOWN_TYPE']);
    expect(accepted).toBeGreaterThan(0);
  });

  it('deep nesting and huge input fail typed, not with a stack overflow', () => {
    for (const depth of [10_000, 200_000]) {
      const deep = '['.repeat(depth) + ']'.repeat(depth);
      for (const r of [decodeClientMessage(deep), decodeSourceMessage(deep), decodeSourceFrame(deep)]) {
        expect(isDecodeFailure(r)).toBe(true);
        expectTyped(r);
      }
    }
    const wide = `[${'{"type":"record.publish","subject":"/A","fields":{"x":1}},'.repeat(10_001)}1]`;
    const r = decodeSourceFrame(wide);
    expect(isDecodeFailure(r) && r.error.code).toBe('BAD_REQUEST');
  });
});

/** The TS verdict on a source frame, as recorded in the differential corpus. */
interface Verdict {
  frame: string;
  ok: boolean;
  count?: number;
  code?: string;
  field?: string;
  index?: number;
}

/** decodeSourceFrame's verdict on `frame`. */
function verdict(frame: string): Verdict {
  const r = decodeSourceFrame(frame);
  if (!isDecodeFailure(r)) return { frame, ok: true, count: r.length };
  const v: Verdict = { frame, ok: false, code: r.error.code };
  if (r.error.field !== undefined) v.field = r.error.field;
  if (r.error.index !== undefined) v.index = r.error.index;
  return v;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A mutated source frame for the differential corpus. A top-level object is wrapped in an array:
 * the engine also takes a lone object, `decodeSourceFrame` only arrays (the server routes lone
 * objects itself). A lone surrogate character becomes U+FFFD, as it would arriving over a
 * WebSocket (frames are UTF-8); an escaped one (`\ud800`) stays.
 */
function corpusFrame(raw: string): string {
  const text = raw.replace(LONE_SURROGATE, '\ufffd');
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return `[${text}]`;
  } catch {
    // not JSON: kept as is
  }
  return text;
}

// frames.json only: the corpus is pinned by its seed (views.json source frames are container.publish objects)
const sourceGolden = readVectors('frames.json').filter((v) => v.direction === 'source').map((v) => v.frame);
const mutatedSourceFrame = fc
  .tuple(fc.constantFrom(...sourceGolden), fc.array(semanticMutation, { minLength: 1, maxLength: 3 }))
  .map(([frame, ms]) => corpusFrame(ms.reduce(mutate, frame)));

const CORPUS_URL = new URL('../fuzz/source-frames.corpus.json', import.meta.url);

describe('differential corpus (TS side of the TS/Rust source decoder agreement)', () => {
  const out = process.env.FUZZ_CORPUS_OUT;
  it.runIf(out !== undefined)('writes the corpus', { timeout: 3_600_000 }, () => {
    const size = Number(process.env.FUZZ_CORPUS_SIZE ?? 2000);
    const frames = fc.sample(mutatedSourceFrame, { numRuns: size, seed: 2026 });
    mkdirSync(dirname(out!), { recursive: true });
    writeFileSync(out!, `[\n${frames.map((f) => JSON.stringify(verdict(f))).join(',\n')}\n]\n`);
  });

  it('the committed corpus still gets the recorded TS verdicts', () => {
    const corpus = JSON.parse(readFileSync(CORPUS_URL, 'utf8')) as Verdict[];
    expect(corpus.length).toBeGreaterThanOrEqual(1000);
    const accepted = corpus.filter((c) => c.ok).length;
    expect(accepted).toBeGreaterThan(0);
    for (const c of corpus) expect(verdict(c.frame)).toEqual(c);
  });
});
