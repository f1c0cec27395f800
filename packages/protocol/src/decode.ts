/**
 * Decoders: wire text -> typed messages.
 *
 * Untrusted input (client frames on `/stream`, source frames on `/source`) is checked strictly:
 * unknown keys, wrong types and broken limits are rejected with an error naming the field, its
 * value and the rule. These decoders never throw; see result.ts for the result convention.
 * Server frames (read by the client SDK) get a cheap shape check and throw `ProtocolError`.
 */

import { MAX_PUBLISHES_PER_FRAME } from './limits.js';
import {
  CLIENT_MESSAGE_TYPES,
  SERVER_MESSAGE_TYPES,
  SOURCE_MESSAGE_TYPES,
  type ClientLatencyReport,
  type ClientMessage,
  type RecordPublish,
  type ServerMessage,
  type SessionLogin,
  type SessionPing,
  type SourceMessage,
  type SourceRegister,
  type SourceServerMessage,
} from './messages.js';
import { ProtocolError, type DecodeFailure } from './result.js';
import { checkOrderRequest } from './order-codec.js';
import { checkPrefsRequest } from './prefs-codec.js';
import { checkResume } from './resume-codec.js';
import { checkStatementRequest } from './statement-codec.js';
import { checkContainerPublish, checkViewRequest } from './view-codec.js';
import {
  Violation,
  checkBool,
  checkFields,
  checkFinite,
  checkKeys,
  checkReqId,
  checkSubject,
  checkSubjects,
  checkText,
  checkTypes,
  fail,
  isObject,
  readReqId,
  show,
  type JsonObject,
} from './rules.js';

const LOGIN_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'user', 'password', 'token']);
const PING_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'ts', 'latency']);
const LATENCY_KEYS: ReadonlySet<string> = new Set(['samples', 'meanMs', 'p99Ms', 'maxMs', 'paintMeanMs']);
const SUBSCRIBE_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'subjects']);
const ADMIN_SUBSCRIBE_KEYS: ReadonlySet<string> = new Set(['type', 'reqId']);
const REGISTER_KEYS: ReadonlySet<string> = new Set(['type', 'reqId', 'patterns', 'priority']);
/** Most patterns one `source.register` may hold (the engine's `MAX_SOURCE_PATTERNS`). */
const MAX_SOURCE_PATTERNS = 64;
const PUBLISH_KEYS: ReadonlySet<string> = new Set(['type', 'subject', 'ts', 'image', 'fields', 'types']);
const CLIENT_TYPES: ReadonlySet<string> = new Set(CLIENT_MESSAGE_TYPES);
const SOURCE_TYPES: ReadonlySet<string> = new Set(SOURCE_MESSAGE_TYPES);
const SERVER_TYPES: ReadonlySet<string> = new Set(SERVER_MESSAGE_TYPES);

function failure(v: Violation, reqId?: number, index?: number): DecodeFailure {
  const error: DecodeFailure['error'] = { code: v.code, message: v.message };
  if (v.field !== undefined) error.field = v.field;
  if (index !== undefined) error.index = index;
  if (reqId !== undefined) error.reqId = reqId;
  return { ok: false, error };
}

/** JSON.parse that reports BAD_FRAME instead of throwing. */
function parse(text: string): unknown {
  if (typeof text !== 'string') throw new Violation('BAD_FRAME', 'a frame must be a UTF-8 JSON text');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Violation('BAD_FRAME', `the frame is not valid JSON: ${(e as Error).message}`);
  }
}

function checkLogin(m: JsonObject): SessionLogin {
  checkKeys(m, LOGIN_KEYS);
  if (m.token !== undefined) {
    checkText('token', m.token);
    if (m.user !== undefined || m.password !== undefined) {
      const extra = m.user !== undefined ? 'user' : 'password';
      fail(extra, m[extra], "must be absent when 'token' is given");
    }
  } else {
    checkText('user', m.user);
    checkText('password', m.password);
  }
  return m as unknown as SessionLogin;
}

function checkLatency(value: unknown): ClientLatencyReport {
  if (!isObject(value)) return fail('latency', value, 'must be an object {samples, meanMs, p99Ms, maxMs}');
  checkKeys(value, LATENCY_KEYS, 'latency.');
  const samples = value.samples;
  if (typeof samples !== 'number' || !Number.isSafeInteger(samples) || samples < 0) {
    fail('latency.samples', samples, 'must be an integer >= 0');
  }
  checkFinite('latency.meanMs', value.meanMs);
  checkFinite('latency.p99Ms', value.p99Ms);
  checkFinite('latency.maxMs', value.maxMs);
  if (value.paintMeanMs !== undefined) checkFinite('latency.paintMeanMs', value.paintMeanMs);
  return value as unknown as ClientLatencyReport;
}

function checkPing(m: JsonObject): SessionPing {
  checkKeys(m, PING_KEYS);
  checkFinite('ts', m.ts);
  if (m.latency !== undefined) checkLatency(m.latency);
  return m as unknown as SessionPing;
}

/** `source.register`: shapes only (the engine checks each pattern's rules and names the bad one). */
function checkRegister(m: JsonObject): SourceRegister {
  checkKeys(m, REGISTER_KEYS);
  const patterns = m.patterns;
  if (!Array.isArray(patterns) || patterns.length === 0 || patterns.length > MAX_SOURCE_PATTERNS) {
    return fail('patterns', patterns, `must be an array of 1..${MAX_SOURCE_PATTERNS} patterns`);
  }
  for (let i = 0; i < patterns.length; i++) checkText(`patterns.${i}`, patterns[i]);
  const priority = m.priority;
  if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > 1_000_000) {
    return fail('priority', priority, 'must be an integer 0..1000000');
  }
  return m as unknown as SourceRegister;
}

function checkPublish(m: JsonObject): RecordPublish {
  checkKeys(m, PUBLISH_KEYS);
  checkSubject('subject', m.subject);
  if (m.ts !== undefined) checkFinite('ts', m.ts);
  if (m.image !== undefined) checkBool('image', m.image);
  const fields = checkFields(m.fields);
  if (m.types !== undefined) checkTypes(m.types, fields);
  return m as unknown as RecordPublish;
}

/** Reads `type`: BAD_REQUEST when missing or not a string, UNKNOWN_TYPE when not in `known`. */
function checkType(m: JsonObject, known: ReadonlySet<string>, endpoint: string): string {
  const type = m.type;
  if (typeof type !== 'string') return fail('type', type, 'must be a message type string');
  if (!known.has(type)) {
    throw new Violation('UNKNOWN_TYPE', `'type' (${show(type)}) is not a message ${endpoint} accepts`);
  }
  return type;
}

/**
 * Decodes one frame a client sent on `/stream` (a single JSON object). Returns the message, or a
 * `DecodeFailure`: BAD_FRAME (not JSON, not an object), UNKNOWN_TYPE, BAD_REQUEST (unknown key,
 * wrong type, broken limit; `field` names it). When `reqId` was readable the failure carries it,
 * so the server can echo it in the `error` frame. Never throws.
 */
export function decodeClientMessage(text: string): ClientMessage | DecodeFailure {
  let reqId: number | undefined;
  try {
    const m = parse(text);
    if (!isObject(m)) throw new Violation('BAD_FRAME', `a client frame must be one JSON object, got ${show(m)}`);
    reqId = readReqId(m.reqId);
    const type = checkType(m, CLIENT_TYPES, 'a client');
    checkReqId(m.reqId);
    switch (type) {
      case 'session.login':
        return checkLogin(m);
      case 'session.ping':
        return checkPing(m);
      case 'session.refresh':
      case 'admin.subscribe':
      case 'admin.unsubscribe':
        checkKeys(m, ADMIN_SUBSCRIBE_KEYS);
        return m as unknown as ClientMessage;
      case 'view.create':
      case 'view.resume':
      case 'view.change':
      case 'view.close':
        return checkViewRequest(m);
      case 'order.submit':
      case 'order.cancel':
      case 'order.amend':
        return checkOrderRequest(m);
      case 'statement.create':
      case 'statement.close':
        return checkStatementRequest(m);
      case 'prefs.get':
      case 'prefs.set':
        return checkPrefsRequest(m);
      case 'record.resume':
        return checkResume(m);
      default:
        checkKeys(m, SUBSCRIBE_KEYS);
        checkSubjects(m.subjects);
        return m as unknown as ClientMessage;
    }
  } catch (e) {
    if (e instanceof Violation) return failure(e, reqId);
    return failure(new Violation('INTERNAL', `decoder fault: ${String(e)}`), reqId);
  }
}

/**
 * Decodes a single-object frame a source sent on `/source`: `session.login`, `session.ping`,
 * one `record.publish` or one `container.publish`. (Arrays of publishes go through `decodeSourceFrame`.) Never throws.
 */
export function decodeSourceMessage(text: string): SourceMessage | DecodeFailure {
  let reqId: number | undefined;
  try {
    const m = parse(text);
    if (!isObject(m)) throw new Violation('BAD_FRAME', `this source frame must be one JSON object, got ${show(m)}`);
    reqId = readReqId(m.reqId);
    const type = checkType(m, SOURCE_TYPES, 'a source');
    if (type === 'record.publish') return checkPublish(m);
    if (type === 'container.publish') return checkContainerPublish(m);
    checkReqId(m.reqId);
    if (type === 'source.register') return checkRegister(m);
    return type === 'session.login' ? checkLogin(m) : checkPing(m);
  } catch (e) {
    if (e instanceof Violation) return failure(e, reqId);
    return failure(new Violation('INTERNAL', `decoder fault: ${String(e)}`), reqId);
  }
}

/**
 * Decodes a source frame that is a JSON array of 1..MAX_PUBLISHES_PER_FRAME `record.publish`
 * messages. Atomic: the first bad message rejects the whole frame, and the failure names its
 * `index` and `field`. An element that is not an object is BAD_FRAME; another message type in
 * the array is UNKNOWN_TYPE. Never throws.
 */
export function decodeSourceFrame(text: string): RecordPublish[] | DecodeFailure {
  let index: number | undefined;
  try {
    const frame = parse(text);
    if (!Array.isArray(frame)) {
      throw new Violation('BAD_FRAME', `a publish frame must be a JSON array of record.publish, got ${show(frame)}`);
    }
    if (frame.length === 0 || frame.length > MAX_PUBLISHES_PER_FRAME) {
      throw new Violation('BAD_REQUEST', `a publish frame must hold 1..${MAX_PUBLISHES_PER_FRAME} messages, got ${frame.length}`);
    }
    for (index = 0; index < frame.length; index++) {
      const m: unknown = frame[index];
      if (!isObject(m)) throw new Violation('BAD_FRAME', `message ${index} must be a JSON object, got ${show(m)}`);
      if (m.type !== 'record.publish') {
        if (typeof m.type !== 'string') fail('type', m.type, "must be 'record.publish'");
        throw new Violation('UNKNOWN_TYPE', `'type' (${show(m.type)}) must be 'record.publish' in a publish frame`);
      }
      checkPublish(m);
    }
    return frame as RecordPublish[];
  } catch (e) {
    if (e instanceof Violation) return failure(e, undefined, index);
    return failure(new Violation('INTERNAL', `decoder fault: ${String(e)}`), undefined, index);
  }
}

/**
 * Decodes a frame the server sent (always a JSON array of messages). Fast: JSON.parse plus a
 * check that every element is an object with a known `type`; message bodies are trusted.
 * @throws ProtocolError BAD_FRAME (not JSON, not an array, an element not an object) or
 *   UNKNOWN_TYPE (an element's `type` is not a server message), with `index` of the element.
 */
function decodeAnyServerFrame(text: string): SourceServerMessage[] {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch (e) {
    throw new ProtocolError('BAD_FRAME', `server frame is not valid JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(frame)) throw new ProtocolError('BAD_FRAME', `server frame must be a JSON array, got ${show(frame)}`);
  for (let i = 0; i < frame.length; i++) {
    const m: unknown = frame[i];
    if (!isObject(m)) throw new ProtocolError('BAD_FRAME', `server message ${i} must be a JSON object, got ${show(m)}`, i);
    if (typeof m.type !== 'string' || !SERVER_TYPES.has(m.type)) {
      throw new ProtocolError('UNKNOWN_TYPE', `server message ${i} has unknown type ${show(m.type)}`, i);
    }
  }
  return frame as SourceServerMessage[];
}

/**
 * Decodes a frame the server sent on `/stream` (see decodeAnyServerFrame for checks and throws).
 * The flow-control types are admitted too but never sent on `/stream`.
 */
export function decodeServerFrame(text: string): ServerMessage[] {
  return decodeAnyServerFrame(text) as ServerMessage[];
}

/**
 * Decodes a frame the server sent on `/source`: replies, errors and flow control
 * (`source.pause` / `source.resume`). Checks and throws as decodeServerFrame.
 */
export function decodeSourceServerFrame(text: string): SourceServerMessage[] {
  return decodeAnyServerFrame(text);
}
