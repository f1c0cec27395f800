/**
 * Every Tidewire wire message, defined once. Server, client SDK, web app, load generator
 * and the Rust engine (via golden frames in ../vectors) all follow this file.
 *
 * Framing (see docs/protocol.md): WebSocket text frames of UTF-8 JSON.
 * - client -> server (`/stream`): one message object per frame.
 * - source -> server (`/source`): one message object, or an array of `record.publish` messages.
 * - server -> client and server -> source: always an array of messages, in order. One flush of a
 *   session's outbox is one frame, however many messages it holds.
 *
 * Names are `entity.verb`; a reply is the past tense and carries the request's `reqId`.
 * Property order in these interfaces is the canonical key order on the wire (the golden frames
 * pin it byte for byte).
 */

import type { ErrorCode } from './codes.js';

/** A field value: number (IEEE-754 double), string, boolean; `null` in a delta deletes the field. */
export type FieldValue = number | string | boolean | null;

/** Field types the store knows. Timestamps travel as epoch milliseconds (numbers). */
export type FieldType = 'number' | 'string' | 'bool' | 'timestamp';

/** Field name -> value, in the record's field order. */
export type Fields = Record<string, FieldValue>;

/**
 * Field name -> type, for fields whose type JSON cannot show (only `timestamp` today).
 * Omitted when empty.
 */
export type FieldTypes = Record<string, FieldType>;

/** Latency a client measured and reports in its heartbeat (`session.ping`). */
export interface ClientLatencyReport {
  /** Updates measured since the previous report. */
  samples: number;
  /** Origin timestamp -> receipt, mean over the period, ms. */
  meanMs: number;
  /** Origin timestamp -> receipt, 99th percentile over the period, ms. */
  p99Ms: number;
  /** Origin timestamp -> receipt, max over the period, ms. */
  maxMs: number;
  /** Origin timestamp -> painted on screen (web app only), mean ms. */
  paintMeanMs?: number;
}

// ---------------------------------------------------------------------------------------------
// client -> server (and source -> server for the session.* messages)

/** Log in with a password or a token from an earlier `session.loggedIn`. */
export interface SessionLogin {
  type: 'session.login';
  reqId: number;
  /** User name; required with `password`. */
  user?: string;
  password?: string;
  /** A signed session token; used instead of user + password (e.g. on reconnect). */
  token?: string;
}

/** Heartbeat; the server answers `session.pong`. Sent every `heartbeatMs` by the client. */
export interface SessionPing {
  type: 'session.ping';
  reqId: number;
  /** Client clock when sent, epoch ms (echoed in the pong for round-trip time). */
  ts: number;
  /** What the client measured since its previous ping. */
  latency?: ClientLatencyReport;
}

/** Subscribe to records. Each subject is acknowledged (possibly as pending) in `record.subscribed`. */
export interface RecordSubscribe {
  type: 'record.subscribe';
  reqId: number;
  /** 1..MAX_SUBJECTS_PER_REQUEST subjects; duplicates of live subscriptions are acknowledged again with a fresh image. */
  subjects: string[];
}

/** Stop receiving records. Unknown or not-subscribed subjects are ignored (idempotent). */
export interface RecordUnsubscribe {
  type: 'record.unsubscribe';
  reqId: number;
  subjects: string[];
}

/** Messages a client may send on `/stream`. */
export type ClientMessage = SessionLogin | SessionPing | RecordSubscribe | RecordUnsubscribe;

// ---------------------------------------------------------------------------------------------
// source -> server (`/source`, after a `session.login` of a user with role `source`)

/** Publish an image (all fields, replacing the record) or a delta (only changed fields) of a record. */
export interface RecordPublish {
  type: 'record.publish';
  subject: string;
  /** Origin timestamp, epoch ms (fractions allowed); when omitted, the server's receive time. */
  ts?: number;
  /** true: `fields` is the whole record (fields absent are removed). Default false: a delta. */
  image?: boolean;
  fields: Fields;
  /** Types of fields JSON cannot show (timestamps). */
  types?: FieldTypes;
}

/** Messages a source may send on `/source`. */
export type SourceMessage = SessionLogin | SessionPing | RecordPublish;

// ---------------------------------------------------------------------------------------------
// server -> client

/** Login accepted. */
export interface SessionLoggedIn {
  type: 'session.loggedIn';
  reqId: number;
  /** Server-wide unique id of this session (shown in logs and the admin console). */
  sessionId: number;
  user: string;
  role: 'trader' | 'admin' | 'source';
  /** Price tier the user's subjects map to. */
  tier: string;
  /** Signed token for reconnecting without a password. */
  token: string;
  /** When `token` stops being accepted, epoch ms. */
  tokenExpiresAt: number;
  /** The client sends `session.ping` this often (its latency report rides on it); dead peers are cut by the transport's idle timeout. */
  heartbeatMs: number;
  /** Server clock, epoch ms. */
  serverTime: number;
}

/** Heartbeat answer. */
export interface SessionPong {
  type: 'session.pong';
  reqId: number;
  /** The ping's `ts`, echoed. */
  ts: number;
  serverTime: number;
}

/** One subject's acknowledgement in `record.subscribed`. */
export interface SubscribedRecord {
  subject: string;
  /** Server-wide id of the subject; `record.image`/`record.update` carry it instead of the subject. */
  id: number;
  /** true: no source has published this subject yet; its image follows when one does. */
  pending: boolean;
}

/** Subscription acknowledged; images follow (in the same or a later frame) for every non-pending record. */
export interface RecordSubscribed {
  type: 'record.subscribed';
  reqId: number;
  records: SubscribedRecord[];
}

/** Unsubscription acknowledged; no message for these subjects follows it. */
export interface RecordUnsubscribed {
  type: 'record.unsubscribed';
  reqId: number;
  subjects: string[];
}

/** The whole record. Sent on subscribe, when a pending record first appears, and after conflation. */
export interface RecordImage {
  type: 'record.image';
  id: number;
  subject: string;
  /** The record's update sequence: +1 per published update, starting at 1. */
  seq: number;
  /** Origin timestamp of the latest update, epoch ms. */
  ts: number;
  fields: Fields;
  types?: FieldTypes;
}

/**
 * Changed fields of a record. `seq` is the previous one + 1, unless `conflated` is true: then
 * several updates were merged (latest values win) and `seq` is the latest merged update's.
 */
export interface RecordUpdate {
  type: 'record.update';
  id: number;
  seq: number;
  /** Origin timestamp of this (latest merged) update, epoch ms. */
  ts: number;
  fields: Fields;
  types?: FieldTypes;
  conflated?: boolean;
}

/** A request failed, or (without reqId) the connection broke a rule. */
export interface ErrorMessage {
  type: 'error';
  /** The failed request's reqId, when it had a readable one. */
  reqId?: number;
  code: ErrorCode;
  /** Human-readable: names the field, the value and the rule. */
  message: string;
  /** Dotted path of the offending field, e.g. `subjects.3`. */
  field?: string;
  /** For source frames: index of the offending message in the frame array. */
  index?: number;
}

/** Messages the server sends to clients and sources. */
export type ServerMessage =
  | SessionLoggedIn
  | SessionPong
  | RecordSubscribed
  | RecordUnsubscribed
  | RecordImage
  | RecordUpdate
  | ErrorMessage;

/** Every `type` a client may send on `/stream`. */
export const CLIENT_MESSAGE_TYPES = ['session.login', 'session.ping', 'record.subscribe', 'record.unsubscribe'] as const;
/** Every `type` a source may send on `/source`. */
export const SOURCE_MESSAGE_TYPES = ['session.login', 'session.ping', 'record.publish'] as const;
/** Every `type` the server sends. */
export const SERVER_MESSAGE_TYPES = [
  'session.loggedIn',
  'session.pong',
  'record.subscribed',
  'record.unsubscribed',
  'record.image',
  'record.update',
  'error',
] as const;
