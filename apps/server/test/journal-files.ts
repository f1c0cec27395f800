/**
 * Reads a stopped server's journal directory the way recovery does (docs/operations.md): segment
 * files `journal-<first seq>.twj`, plus a `spare-*.twj` in use (a segment started in a zero-filled
 * spare whose rename had not happened when the process died), ordered by the first seq in their
 * header, never by directory order or file name.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

/** One journal segment's valid records: start offsets and seqs, and the end of the last one. */
export interface Segment {
  path: string;
  /** First seq from the header. */
  first: number;
  starts: number[];
  seqs: number[];
  end: number;
}

/** The header's first seq when `buf` starts with a valid segment header (magic `TWJ\0`, CRC32), else undefined. */
function headerFirstSeq(buf: Buffer): number | undefined {
  if (buf.length < 32 || buf.readUInt32LE(0) !== 0x004a5754 || crc32(buf.subarray(0, 28)) !== buf.readUInt32LE(28)) return undefined;
  return Number(buf.readBigUInt64LE(16));
}

/**
 * Reads a journal segment (a 32-byte header, then records of length u32 LE | CRC32 u32 LE of the
 * payload | payload = seq u64 LE | group u64 LE | body; zeros after the last record are
 * preallocated space), stopping at the first invalid record; undefined when the header is not
 * valid (an unused spare).
 */
export function readSegment(file: string): Segment | undefined {
  const buf = readFileSync(file);
  const first = headerFirstSeq(buf);
  if (first === undefined) return undefined;
  const seg: Segment = { path: file, first, starts: [], seqs: [], end: 32 };
  // bounded by the file: each step moves past one record of at least 8 bytes
  for (let at = 32; at + 8 <= buf.length; ) {
    const len = buf.readUInt32LE(at);
    if (len < 16 || at + 8 + len > buf.length || crc32(buf.subarray(at + 8, at + 8 + len)) !== buf.readUInt32LE(at + 4)) break;
    seg.starts.push(at);
    seg.seqs.push(Number(buf.readBigUInt64LE(at + 8)));
    at += 8 + len;
    seg.end = at;
  }
  return seg;
}

/**
 * Every segment of the journal in `dir` (spares in use included), ordered by first seq. Read while
 * a server runs, a spare listed may be renamed into a segment before it is read: it is left out
 * of this reading (the next one lists it under its new name).
 */
export function segments(dir: string): Segment[] {
  return readdirSync(dir)
    .filter((f) => /^(journal|spare)-\d{20}\.twj$/.test(f))
    .map((f) => readListed(path.join(dir, f)))
    .filter((s): s is Segment => s !== undefined)
    .sort((a, b) => a.first - b.first);
}

/** readSegment, or undefined when the file went away since it was listed. */
function readListed(file: string): Segment | undefined {
  try {
    return readSegment(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Every seq held by the journal in `dir`, in chain order. */
export function journalSeqs(dir: string): number[] {
  return segments(dir).flatMap((s) => s.seqs);
}

/** The live segment (highest first seq): where its last valid record starts and ends, and its last seq. */
export function lastSegment(dir: string): { path: string; first: number; end: number; lastStart: number; records: number } {
  const seg = segments(dir).at(-1);
  if (seg === undefined) throw new Error(`no journal segment in ${dir}`);
  if (seg.starts.length === 0) throw new Error(`no valid record in ${seg.path}`);
  return { path: seg.path, first: seg.first, end: seg.end, lastStart: seg.starts.at(-1)!, records: seg.seqs.at(-1)! };
}
