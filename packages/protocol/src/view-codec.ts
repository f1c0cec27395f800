/**
 * Codec of the container and view messages (messages.ts, section "Containers and views").
 *
 * Same conventions as decode.ts / encode.ts: decoders check untrusted input strictly and never
 * throw (a `DecodeFailure` names the field, its value and the rule); encoders rebuild each
 * message in the canonical key order of messages.ts, so the Rust engine can write the server
 * messages byte-identically (golden frames in ../vectors pin it). Filter text is only checked to
 * be a string here: the engine parses it and reports errors with their position.
 */

import {
  FIELD_NAME_PATTERN,
  MAX_CONTAINER_OPS,
  MAX_SUBJECTS_PER_CONTAINER_OP,
  MAX_VIEW_OFFSET,
  MAX_VIEW_SORT_KEYS,
  MAX_VIEW_WINDOW_ROWS,
  MAX_REQ_ID,
} from './limits.js';
import {
  VIEW_CLIENT_MESSAGE_TYPES,
  type ContainerOp,
  type ContainerPublish,
  type ViewClientMessage,
  type ViewRowImage,
  type ViewRowUpdate,
  type ViewServerMessage,
  type ViewSortKey,
  type ViewWindow,
} from './messages.js';
import type { DecodeFailure } from './result.js';
import { Violation, checkKeys, checkReqId, checkSubject, fail, isObject, readReqId, show, type JsonObject } from './rules.js';

const CREATE_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'container', 'filter', 'sort', 'window']);
const RESUME_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'epoch', 'sessionId', 'viewId', 'seq', 'container', 'filter', 'sort', 'window']);
const CHANGE_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'viewId', 'window']);
const CLOSE_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'viewId']);
const WINDOW_KEYS: ReadonlySet<string> = new Set(['offset', 'size']);
const SORT_KEY_KEYS: ReadonlySet<string> = new Set(['field', 'dir']);
const PUBLISH_KEYS: ReadonlySet<string> = new Set(['type', 'subject', 'ops']);
const OP_KEYS: Readonly<Record<ContainerOp['op'], ReadonlySet<string>>> = {
  add: new Set(['op', 'subjects']),
  insertAt: new Set(['op', 'index', 'subjects']),
  remove: new Set(['op', 'subjects']),
  clear: new Set(['op']),
};
const VIEW_TYPES: ReadonlySet<string> = new Set(VIEW_CLIENT_MESSAGE_TYPES);

function failure(e: unknown, reqId?: number): DecodeFailure {
  const v = e instanceof Violation ? e : new Violation('INTERNAL', `decoder fault: ${String(e)}`);
  const error: DecodeFailure['error'] = { code: v.code, message: v.message };
  if (v.field !== undefined) error.field = v.field;
  if (reqId !== undefined) error.reqId = reqId;
  return { ok: false, error };
}

function parseObject(text: string, what: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Violation('BAD_FRAME', `the frame is not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(value)) throw new Violation('BAD_FRAME', `${what} must be one JSON object, got ${show(value)}`);
  return value;
}

/** An integer in min..=max. */
function checkInt(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(field, value, `must be an integer ${min}..${max}`);
  }
  return value as number;
}

function checkWindow(value: unknown): ViewWindow {
  if (!isObject(value)) return fail('window', value, 'must be an object {offset, size}');
  checkKeys(value, WINDOW_KEYS, 'window.');
  checkInt('window.offset', value.offset, 0, MAX_VIEW_OFFSET);
  checkInt('window.size', value.size, 1, MAX_VIEW_WINDOW_ROWS);
  return value as unknown as ViewWindow;
}

function checkSort(value: unknown): ViewSortKey[] {
  if (!Array.isArray(value)) return fail('sort', value, 'must be an array of {field, dir}');
  if (value.length > MAX_VIEW_SORT_KEYS) {
    throw new Violation('BAD_REQUEST', `'sort' holds ${value.length} keys: at most ${MAX_VIEW_SORT_KEYS} are allowed`, 'sort');
  }
  const seen = new Set<string>();
  value.forEach((key: unknown, i) => {
    if (!isObject(key)) fail(`sort.${i}`, key, 'must be an object {field, dir}');
    checkKeys(key, SORT_KEY_KEYS, `sort.${i}.`);
    const field = key.field;
    if (typeof field !== 'string' || !FIELD_NAME_PATTERN.test(field)) {
      fail(`sort.${i}.field`, field, 'must be a field name (a letter or _, then letters, digits, _)');
    }
    if (seen.has(field)) fail(`sort.${i}.field`, field, 'is already a sort key: each field may be sorted on once');
    seen.add(field);
    if (key.dir !== 'asc' && key.dir !== 'desc') fail(`sort.${i}.dir`, key.dir, "must be 'asc' or 'desc'");
  });
  return value as ViewSortKey[];
}

/** Checks a parsed view request (its `type` is one of VIEW_CLIENT_MESSAGE_TYPES); throws Violation. */
export function checkViewRequest(m: JsonObject): ViewClientMessage {
  checkReqId(m.reqId);
  switch (m.type) {
    case 'view.create':
      checkKeys(m, CREATE_KEYS);
      checkSubject('container', m.container);
      if (m.filter !== undefined && typeof m.filter !== 'string') fail('filter', m.filter, 'must be a filter expression string');
      if (m.sort !== undefined) checkSort(m.sort);
      checkWindow(m.window);
      break;
    case 'view.resume':
      checkKeys(m, RESUME_KEYS);
      checkInt('epoch', m.epoch, 0, Number.MAX_SAFE_INTEGER);
      checkInt('sessionId', m.sessionId, 0, 0xffff_ffff);
      checkInt('viewId', m.viewId, 0, MAX_REQ_ID);
      checkInt('seq', m.seq, 0, Number.MAX_SAFE_INTEGER);
      checkSubject('container', m.container);
      if (m.filter !== undefined && typeof m.filter !== 'string') fail('filter', m.filter, 'must be a filter expression string');
      if (m.sort !== undefined) checkSort(m.sort);
      checkWindow(m.window);
      break;
    case 'view.change':
      checkKeys(m, CHANGE_KEYS);
      checkInt('viewId', m.viewId, 0, MAX_REQ_ID);
      checkWindow(m.window);
      break;
    default:
      checkKeys(m, CLOSE_KEYS);
      checkInt('viewId', m.viewId, 0, MAX_REQ_ID);
  }
  return m as unknown as ViewClientMessage;
}

/**
 * Decodes a view request a client sent on `/stream` (`view.create`, `view.change`,
 * `view.close`). Failures: BAD_FRAME (not JSON, not an object), UNKNOWN_TYPE (another type),
 * BAD_REQUEST naming the field (unknown key, window out of range, bad sort key, ...), with the
 * reqId when it was readable. Never throws.
 */
export function decodeViewRequest(text: string): ViewClientMessage | DecodeFailure {
  let reqId: number | undefined;
  try {
    const m = parseObject(text, 'a client frame');
    reqId = readReqId(m.reqId);
    if (typeof m.type !== 'string') fail('type', m.type, 'must be a message type string');
    if (!VIEW_TYPES.has(m.type)) throw new Violation('UNKNOWN_TYPE', `'type' (${show(m.type)}) is not a view request`);
    return checkViewRequest(m);
  } catch (e) {
    return failure(e, reqId);
  }
}

function checkOpSubjects(field: string, value: unknown): void {
  if (!Array.isArray(value)) return fail(field, value, 'must be an array of subjects');
  if (value.length === 0 || value.length > MAX_SUBJECTS_PER_CONTAINER_OP) {
    throw new Violation('BAD_REQUEST', `'${field}' holds ${value.length} subjects: it must hold 1..${MAX_SUBJECTS_PER_CONTAINER_OP}`, field);
  }
  for (let i = 0; i < value.length; i++) checkSubject(`${field}.${i}`, value[i]);
}

/** Checks a parsed `container.publish` (its `type` already checked); throws Violation. */
export function checkContainerPublish(m: JsonObject): ContainerPublish {
  checkKeys(m, PUBLISH_KEYS);
  checkSubject('subject', m.subject);
  const ops = m.ops;
  if (!Array.isArray(ops)) return fail('ops', ops, 'must be an array of container ops');
  if (ops.length === 0 || ops.length > MAX_CONTAINER_OPS) {
    throw new Violation('BAD_REQUEST', `'ops' holds ${ops.length} ops: it must hold 1..${MAX_CONTAINER_OPS}`, 'ops');
  }
  ops.forEach((op: unknown, i) => {
    if (!isObject(op)) fail(`ops.${i}`, op, 'must be an object {op, ...}');
    const name = op.op;
    if (typeof name !== 'string' || !Object.hasOwn(OP_KEYS, name)) {
      fail(`ops.${i}.op`, name, "must be 'add', 'insertAt', 'remove' or 'clear'");
    }
    checkKeys(op, OP_KEYS[name as ContainerOp['op']], `ops.${i}.`);
    if (name === 'insertAt') checkInt(`ops.${i}.index`, op.index, 0, MAX_VIEW_OFFSET);
    if (name !== 'clear') checkOpSubjects(`ops.${i}.subjects`, op.subjects);
  });
  return m as unknown as ContainerPublish;
}

/**
 * Decodes one `container.publish` a source sent on `/source`. Failures as `decodeViewRequest`
 * (no reqId: publishes have none); an op name other than add/insertAt/remove/clear is
 * BAD_REQUEST naming `ops.N.op`. Never throws.
 */
export function decodeContainerPublish(text: string): ContainerPublish | DecodeFailure {
  try {
    const m = parseObject(text, 'a source frame');
    if (m.type !== 'container.publish') {
      if (typeof m.type !== 'string') fail('type', m.type, "must be 'container.publish'");
      throw new Violation('UNKNOWN_TYPE', `'type' (${show(m.type)}) is not 'container.publish'`);
    }
    return checkContainerPublish(m);
  } catch (e) {
    return failure(e);
  }
}

/** A message rebuilt key by key in canonical order. */
export type Ordered = Record<string, unknown>;

function windowOf(w: ViewWindow): Ordered {
  return { offset: w.offset, size: w.size };
}

/** A view request rebuilt in canonical key order (`filter` and `sort` only when given). */
export function orderViewRequest(m: ViewClientMessage): Ordered {
  switch (m.type) {
    case 'view.create': {
      const o: Ordered = { type: m.type, reqId: m.reqId, container: m.container };
      if (m.filter !== undefined) o.filter = m.filter;
      if (m.sort !== undefined) o.sort = m.sort.map((k) => ({ field: k.field, dir: k.dir }));
      o.window = windowOf(m.window);
      return o;
    }
    case 'view.resume': {
      const o: Ordered = { type: m.type, reqId: m.reqId, epoch: m.epoch, sessionId: m.sessionId, viewId: m.viewId, seq: m.seq, container: m.container };
      if (m.filter !== undefined) o.filter = m.filter;
      if (m.sort !== undefined) o.sort = m.sort.map((k) => ({ field: k.field, dir: k.dir }));
      o.window = windowOf(m.window);
      return o;
    }
    case 'view.change':
      return { type: m.type, reqId: m.reqId, viewId: m.viewId, window: windowOf(m.window) };
    case 'view.close':
      return { type: m.type, reqId: m.reqId, viewId: m.viewId };
  }
}

/** A view request as wire text, canonical key order (`filter` and `sort` only when given). */
export function encodeViewRequest(m: ViewClientMessage): string {
  return JSON.stringify(orderViewRequest(m));
}

function opOf(op: ContainerOp): Ordered {
  switch (op.op) {
    case 'insertAt':
      return { op: op.op, index: op.index, subjects: op.subjects };
    case 'clear':
      return { op: op.op };
    default:
      return { op: op.op, subjects: op.subjects };
  }
}

/** A `container.publish` rebuilt in canonical key order. */
export function orderContainerPublish(m: ContainerPublish): Ordered {
  return { type: m.type, subject: m.subject, ops: m.ops.map(opOf) };
}

/** A `container.publish` as wire text (always a single-object frame). */
export function encodeContainerPublish(m: ContainerPublish): string {
  return JSON.stringify(orderContainerPublish(m));
}

function rowImage(r: ViewRowImage): Ordered {
  const o: Ordered = { index: r.index, id: r.id, subject: r.subject, seq: r.seq, ts: r.ts, fields: r.fields };
  if (r.types !== undefined) o.types = r.types;
  return o;
}

function rowUpdate(r: ViewRowUpdate): Ordered {
  const o: Ordered = { id: r.id, seq: r.seq, ts: r.ts, fields: r.fields };
  if (r.types !== undefined) o.types = r.types;
  if (r.conflated === true) o.conflated = true;
  return o;
}

/** A view server message rebuilt in canonical key order (empty diff lists left out). */
export function orderView(m: ViewServerMessage): Ordered {
  switch (m.type) {
    case 'view.created': {
      const o: Ordered = { type: m.type, reqId: m.reqId, viewId: m.viewId };
      if (m.seq !== undefined) o.seq = m.seq;
      o.count = m.count;
      o.rows = m.rows.map(rowImage);
      if (m.reset === true) o.reset = true;
      return o;
    }
    case 'view.resumed':
      return { type: m.type, reqId: m.reqId, viewId: m.viewId, seq: m.seq };
    case 'view.rows': {
      const o: Ordered = { type: m.type, reqId: m.reqId, viewId: m.viewId };
      if (m.seq !== undefined) o.seq = m.seq;
      if (m.left !== undefined && m.left.length > 0) o.left = m.left;
      if (m.moved !== undefined && m.moved.length > 0) o.moved = m.moved.map((r) => ({ index: r.index, id: r.id }));
      if (m.entered !== undefined && m.entered.length > 0) o.entered = m.entered.map(rowImage);
      if (m.updated !== undefined && m.updated.length > 0) o.updated = m.updated.map(rowUpdate);
      return o;
    }
    case 'view.size':
      return m.seq === undefined ? { type: m.type, viewId: m.viewId, count: m.count } : { type: m.type, viewId: m.viewId, seq: m.seq, count: m.count };
    case 'view.closed':
      return { type: m.type, reqId: m.reqId, viewId: m.viewId };
  }
}

/**
 * View messages as one server frame (a JSON array), canonical key order; empty lists of
 * `view.rows` are left out and `conflated` is written only when true. `fields`/`types` keep the
 * caller's key order (the record's field order).
 */
export function encodeViewFrame(ms: readonly ViewServerMessage[]): string {
  return JSON.stringify(ms.map(orderView));
}
