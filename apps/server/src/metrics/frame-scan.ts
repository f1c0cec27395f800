/**
 * Reads a sent server frame without parsing it: counts its messages and, for every
 * `record.update` / `record.image`, measures origin timestamp (`ts`) -> now.
 *
 * Why this is exact on engine frames: a frame is `[m1,m2,...]` of objects that start with
 * `{"type":"`; field values are scalars, and a quote inside a string is escaped (`\"`), so the
 * byte sequence `,{"type":"` occurs only between messages, and the first `,"ts":` after a record
 * message's type is its own `ts` (messages.ts key order: `ts` precedes `fields`).
 */

const START = Buffer.from('[{"type":"');
const NEXT = Buffer.from(',{"type":"');
const UPDATE = Buffer.from('record.update"');
const IMAGE = Buffer.from('record.image"');
const TS = Buffer.from(',"ts":');

/** Bytes of a JSON number: digits, sign, dot, exponent. */
function isNumberByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x2d || b === 0x2b || b === 0x65 || b === 0x45;
}

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/**
 * The JSON number at `at`: plain `digits[.digits]` read from the bytes (no string allocation: this
 * runs per message); anything else (sign, exponent, > 15 fraction digits) through Number().
 */
function readNumber(frame: Buffer, at: number): number {
  let i = at;
  let int = 0;
  while (i < frame.length) {
    const b = frame[i]!;
    if (b < 0x30 || b > 0x39) break;
    int = int * 10 + (b - 0x30);
    i++;
  }
  let frac = 0;
  let digits = 0;
  if (frame[i] === 0x2e) {
    i++;
    while (i < frame.length) {
      const b = frame[i]!;
      if (b < 0x30 || b > 0x39) break;
      frac = frac * 10 + (b - 0x30);
      digits++;
      i++;
    }
  }
  if (i > at && digits < POW10.length && !isNumberByte(frame[i] ?? 0)) return int + frac / POW10[digits]!;
  let end = at;
  while (end < frame.length && isNumberByte(frame[end]!)) end++;
  return Number(frame.toString('latin1', at, end));
}

function startsWith(frame: Buffer, at: number, prefix: Buffer): boolean {
  return at + prefix.length <= frame.length && frame.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/**
 * Scans one frame (`frame` is exactly the frame's bytes). Calls `onLatency(nowMs - ts)` per record
 * message and returns the number of messages; 0 when the frame does not look like a server frame.
 */
export function scanFrame(frame: Buffer, nowMs: number, onLatency: (latencyMs: number) => void): number {
  if (!startsWith(frame, 0, START)) return 0;
  let messages = 0;
  let typeAt = START.length;
  for (;;) {
    messages++;
    if (startsWith(frame, typeAt, UPDATE) || startsWith(frame, typeAt, IMAGE)) {
      const ts = frame.indexOf(TS, typeAt);
      if (ts > 0) {
        const value = readNumber(frame, ts + TS.length);
        if (Number.isFinite(value)) onLatency(nowMs - value);
      }
    }
    const next = frame.indexOf(NEXT, typeAt);
    if (next < 0) return messages;
    typeAt = next + NEXT.length;
  }
}
