/**
 * Reads a sent server frame without parsing it: counts its messages and, for every
 * `record.update` / `record.image`, measures origin timestamp (`ts`) -> now; for every row in the
 * `updated` list of a `view.rows`, the row's update `ts` -> now (view update latency: record update
 * -> window diff sent).
 *
 * Why this is exact on engine frames: a frame is `[m1,m2,...]` of objects that start with
 * `{"type":"`; field values are scalars, and a quote inside a string is escaped (`\"`), so the
 * byte sequence `,{"type":"` occurs only between messages, and the first `,"ts":` after a record
 * message's type is its own `ts` (messages.ts key order: `ts` precedes `fields`). In a `view.rows`,
 * `updated` is the last key and each of its rows is `{"id":…,"seq":…,"ts":…,"fields":…}`: a row
 * starts with `{"id":` after `[` or `,` (an `id` field inside `fields`/`types` follows a `:`).
 * Entered rows are not measured: a window move brings rows whose `ts` is old.
 */

const START = Buffer.from('[{"type":"');
const NEXT = Buffer.from(',{"type":"');
const UPDATE = Buffer.from('record.update"');
const IMAGE = Buffer.from('record.image"');
const TS = Buffer.from(',"ts":');
const VIEW_ROWS = Buffer.from('view.rows"');
const UPDATED = Buffer.from('"updated":[');
const ROW = Buffer.from('{"id":');

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

/** True when `prefix` is at `at`; a byte loop (prefixes are ~10 bytes: cheaper than Buffer.compare's native call). */
function startsWith(frame: Buffer, at: number, prefix: Buffer): boolean {
  const n = prefix.length;
  if (at + n > frame.length) return false;
  for (let i = 0; i < n; i++) if (frame[at + i] !== prefix[i]) return false;
  return true;
}

/** Calls `onLatency(nowMs - ts)` for each row of the `updated` list of the view.rows in `[from, to)`. */
function scanUpdatedRows(frame: Buffer, from: number, to: number, nowMs: number, onLatency: (latencyMs: number) => void): void {
  const list = frame.indexOf(UPDATED, from);
  if (list < 0 || list >= to) return;
  let at = list + UPDATED.length - 1; // the '['
  for (;;) {
    const row = frame.indexOf(ROW, at);
    if (row < 0 || row >= to) return;
    const before = frame[row - 1];
    at = row + ROW.length;
    if (before !== 0x5b && before !== 0x2c) continue; // not after '[' or ',': an `id` field
    const ts = frame.indexOf(TS, at);
    if (ts < 0 || ts >= to) return;
    const value = readNumber(frame, ts + TS.length);
    if (Number.isFinite(value)) onLatency(nowMs - value);
  }
}

/**
 * Scans one frame (`frame` is exactly the frame's bytes). Calls `onLatency(nowMs - ts)` per record
 * message and `onViewLatency(nowMs - ts)` per updated view row; returns the number of messages; 0
 * when the frame does not look like a server frame.
 */
export function scanFrame(
  frame: Buffer,
  nowMs: number,
  onLatency: (latencyMs: number) => void,
  onViewLatency?: (latencyMs: number) => void,
): number {
  if (!startsWith(frame, 0, START)) return 0;
  let messages = 0;
  let typeAt = START.length;
  for (;;) {
    messages++;
    const next = frame.indexOf(NEXT, typeAt);
    if (startsWith(frame, typeAt, UPDATE) || startsWith(frame, typeAt, IMAGE)) {
      const ts = frame.indexOf(TS, typeAt);
      if (ts > 0) {
        const value = readNumber(frame, ts + TS.length);
        if (Number.isFinite(value)) onLatency(nowMs - value);
      }
    } else if (onViewLatency !== undefined && startsWith(frame, typeAt, VIEW_ROWS)) {
      scanUpdatedRows(frame, typeAt, next < 0 ? frame.length : next, nowMs, onViewLatency);
    }
    if (next < 0) return messages;
    typeAt = next + NEXT.length;
  }
}
