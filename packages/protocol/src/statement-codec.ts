/**
 * Codec of the statement messages (messages.ts, section "Analytics statements").
 *
 * Same conventions as view-codec.ts: the decoder checks untrusted input strictly and never throws
 * (a failure names the field, its value and the rule); encoders rebuild each message in the
 * canonical key order of messages.ts, so the Rust engine writes `statement.created` /
 * `statement.closed` byte-identically (the statement.* golden frames in ../vectors/frames.json
 * pin it). The decoder checks shapes only (a name, a non-empty text within MAX_STATEMENT_BYTES);
 * the statement language is the engine's, answered with BAD_REQUEST naming the column.
 */

import { MAX_STATEMENT_BYTES, MAX_STATEMENT_NAME_CHARS, STAT_SUBJECT_PREFIX } from './limits.js';
import type { StatementClientMessage, StatementServerMessage } from './messages.js';
import { checkKeys, checkReqId, fail, utf8Bytes, type JsonObject } from './rules.js';
import type { Ordered } from './view-codec.js';

const CREATE_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'name', 'statement']);
const CLOSE_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'name']);

/** A statement name: 1..MAX_STATEMENT_NAME_CHARS of `[A-Za-z0-9_.@:-]` (a subject segment). */
export const STATEMENT_NAME_PATTERN = new RegExp(`^[A-Za-z0-9_.@:-]{1,${MAX_STATEMENT_NAME_CHARS}}$`);

/** True when `value` is a valid statement name. */
export function isStatementName(value: unknown): value is string {
  return typeof value === 'string' && STATEMENT_NAME_PATTERN.test(value);
}

function checkName(value: unknown): string {
  if (!isStatementName(value)) fail('name', value, `must be 1..${MAX_STATEMENT_NAME_CHARS} characters of letters, digits and _.@:- (a subject segment of /STAT/<name>/<key>)`);
  return value as string;
}

/** Checks a parsed statement request (its `type` is `statement.create` or `statement.close`); throws Violation. */
export function checkStatementRequest(m: JsonObject): StatementClientMessage {
  checkReqId(m.reqId);
  if (m.type === 'statement.create') {
    checkKeys(m, CREATE_KEYS);
    checkName(m.name);
    const text = m.statement;
    if (typeof text !== 'string' || text.trim().length === 0) fail('statement', text, 'must be a non-empty string (docs/analytics.md)');
    if (utf8Bytes(text as string) > MAX_STATEMENT_BYTES) fail('statement', text, `must be at most ${MAX_STATEMENT_BYTES} bytes of UTF-8`);
  } else {
    checkKeys(m, CLOSE_KEYS);
    checkName(m.name);
  }
  return m as unknown as StatementClientMessage;
}

/** A statement request rebuilt in canonical key order. */
export function orderStatementRequest(m: StatementClientMessage): Ordered {
  if (m.type === 'statement.create') return { type: m.type, reqId: m.reqId, name: m.name, statement: m.statement };
  return { type: m.type, reqId: m.reqId, name: m.name };
}

/** A statement reply rebuilt in canonical key order. */
export function orderStatementReply(m: StatementServerMessage): Ordered {
  if (m.type === 'statement.created') return { type: m.type, reqId: m.reqId, name: m.name, statement: m.statement, container: m.container };
  return { type: m.type, reqId: m.reqId, name: m.name };
}

/** `/STAT/<name>`: the container of statement `name`'s result records. */
export function statementContainer(name: string): string {
  return `${STAT_SUBJECT_PREFIX}${name}`;
}

/** `/STAT/<name>/<key>`: one result record (`key` as docs/analytics.md writes it). */
export function statementSubject(name: string, key: string): string {
  return `${STAT_SUBJECT_PREFIX}${name}/${key}`;
}

/**
 * The 1-based column a statement refusal names (`statement at 14: ...`), or undefined when the
 * message names none (a refusal other than a parse error).
 */
export function statementErrorColumn(message: string): number | undefined {
  const m = /^statement at (\d+): /.exec(message);
  return m ? Number(m[1]) : undefined;
}
