/**
 * The part of the engine (packages/engine, napi) that handlers and the transport call. The real
 * `Engine` satisfies it; session tests pass a fake. Signatures follow packages/engine/index.d.ts;
 * the value types are the engine's own (generated there), not copies.
 */

import type { OrderGrants, OrderSubmitInput, PublishGrants, SessionViewInfo, StatementStream, ViewResumeInput } from '@tidewire/engine';
import type { ContainerOp } from '@tidewire/protocol';
import type { EngineViewStat } from './admin/views-table.js';
import type { ContainerMembersList } from './entitlements/member-check.js';

// OrderSubmitInput: no price is a market order; a null price is refused by napi (pass none)
export type { OrderGrants, OrderSubmitInput, PublishGrants, SessionViewInfo, ViewResumeInput } from '@tidewire/engine';

/** Engine calls used by the server. */
export interface EnginePort {
  /** Opens an engine session owned by `workerId`; returns its server-wide id. */
  openSession(workerId: number, user: string, tier: string): number;
  /**
   * Drops the session, its subscriptions and queued frames. Unknown ids are ignored. `keepViews`:
   * the connection dropped (its client did not close it), so its views are held for `view.resume`
   * for `views.resumeGraceMs`.
   */
  closeSession(sessionId: number, keepViews?: boolean): void;
  /** Queues `record.subscribed` (+ images) for the session; errors arrive as `error` frames through drain. */
  subscribe(sessionId: number, reqId: number, subjects: string[]): void;
  /**
   * `record.resume`: `subjects[i]` was held as record `ids[i]` at `seqs[i]` in `epoch`. Queues
   * `record.resumed`, then per record the missed messages from its history or an image flagged
   * `reset`; errors arrive as `error` frames through drain.
   */
  resume(sessionId: number, reqId: number, epoch: number, subjects: string[], ids: number[], seqs: number[]): void;
  /** This engine's epoch (`session.loggedIn`'s `epoch`): differs from every earlier run's. */
  readonly epoch: number;
  /** Queues `record.unsubscribed`; nothing for these subjects follows. */
  unsubscribe(sessionId: number, reqId: number, subjects: string[]): void;
  /**
   * Opens (or shares) a view; `view.created` (or an `error`) then `view.size` / `view.rows`
   * arrive through drain. `sort` is engine sort text (`name asc, bid desc`; empty: natural order),
   * `filter` engine filter text (empty: every member).
   */
  viewCreate(sessionId: number, reqId: number, container: string, filter: string, sort: string, offset: number, size: number): void;
  /**
   * `view.resume`: continues a view held since its session dropped (`view.resumed`, then what it
   * missed) or opens the definition afresh (`view.created` flagged `reset`); or an `error`. All
   * arrive through drain. `sort` and `filter` as for `viewCreate`.
   */
  viewResume(sessionId: number, reqId: number, resume: ViewResumeInput): void;
  /** Moves the session's window on its view `viewId`; the next `view.rows` carries `reqId`. */
  viewChange(sessionId: number, reqId: number, viewId: number, offset: number, size: number): void;
  /** Closes the session's view `viewId`; `view.closed` (or NOT_FOUND) arrives through drain. */
  viewClose(sessionId: number, reqId: number, viewId: number): void;
  /**
   * The open views of sessions `sessionIds` (view id, container as requested, tier), as the
   * engine sees them after every call made before this one. Rejects when the engine thread does
   * not answer (2 s) or has stopped.
   */
  sessionViews(sessionIds: number[]): Promise<SessionViewInfo[]>;
  /**
   * Closes the session's view `viewId` after a rule change: an `error` NOT_ENTITLED (`field:
   * "viewId"`, `reason` as its message) then `view.closed` with reqId 0 arrive through drain;
   * nothing when the view is no longer open.
   */
  revokeView(sessionId: number, viewId: number, reason: string): void;
  /**
   * The members (subjects, natural order) of `containers`, one entry per name asked (unknown or
   * empty container: none); `[]` asks for every container with members (the engine's per-tier
   * mirrors never listed). Answered after every call made before this one, except container
   * publishes (the engine's ingest lane is not ordered with it). Rejects when the engine thread
   * does not answer (2 s) or has stopped. A config reload re-checks the members with it
   * (transport/auth-reload.ts); absent in unit-test fakes, where a reload then treats views as
   * not re-checkable (their sessions closed with 4003) and denies no container.
   */
  containerMembers?(containers: string[]): Promise<ContainerMembersList[]>;
  /**
   * The stream statement `text` reads (`pattern` or `container`), parsed exactly as
   * `statementCreate` will; throws {code: 'BAD_REQUEST', field: 'statement', message naming the
   * column} for a statement that does not parse. Pure: no engine work.
   */
  statementStream(text: string): StatementStream;
  /**
   * `statement.create` for the session, within its user's quota (`maxCount` statements,
   * `maxCost` window events per key, summed); `statement.created` or an `error` arrives through
   * drain (docs/analytics.md).
   */
  statementCreate(sessionId: number, reqId: number, name: string, text: string, maxCount: number, maxCost: number): void;
  /** Releases one of the session's references to statement `name`; `statement.closed` or NOT_FOUND through drain. */
  statementClose(sessionId: number, reqId: number, name: string): void;
  /** Applies a validated `container.publish` (ops in order). */
  containerPublish(subject: string, ops: ContainerOp[]): void;
  /**
   * Submits an order for the session's user: `order.ack` (once durable), `order.reject` or
   * `error` arrive through drain. Throws {code: 'UNAVAILABLE'} when orders are disabled.
   */
  orderSubmit(sessionId: number, reqId: number, order: OrderSubmitInput): void;
  /** Cancels the session user's open order `clientOrderId`; replies as orderSubmit. */
  orderCancel(sessionId: number, reqId: number, clientOrderId: string): void;
  /** Amends the session user's open order (null leaves quantity / price as is); replies as orderSubmit. */
  orderAmend(sessionId: number, reqId: number, clientOrderId: string, quantity?: number | null, price?: number | null): void;
  /**
   * Compiles a trader's order rules (`patterns`: its role's then its own, as configured) with its
   * price `tier` (null: none) among every configured tier `tiers`, for `orderSubmitFrame` and
   * `OrderGrants.permits`; `user` and `role` are named in its refusals. Made once per user record
   * and config reload (handlers/order-grants.ts). Throws {code: 'BAD_REQUEST'} naming an invalid pattern.
   */
  orderGrants(user: string, role: string, patterns: string[], tier: string | null, tiers: string[]): OrderGrants;
  /**
   * The `order.submit` fast path in one call: reads a client frame's bytes, checks `grants`, then
   * `orderToken`, then submits (handlers/order.ts submitFrame). The reqId when submitted;
   * ORDER_FRAME_NOT_TAKEN when the frame is not one it takes (decode it); ORDER_FRAME_NO_TOKEN when
   * permitted but `orderToken` is false. Throws NOT_ENTITLED (field `instrument`), else as
   * `orderSubmit`. Optional: engines without it (test fakes) leave every order to the decoder path.
   */
  orderSubmitFrame?(sessionId: number, frame: Uint8Array, grants: OrderGrants, orderToken: boolean): number;
  /**
   * Compiles a source's publish rules (`patterns`: its role's then its own, as configured) for
   * `ingest`; `user` and `role` are named in its refusals. Made once per login and config reload
   * (handlers/source.ts publishGrantsOf). Throws {code: 'BAD_REQUEST'} naming an invalid pattern.
   */
  publishGrants(user: string, role: string, patterns: string[]): PublishGrants;
  /**
   * `source.register` of a `/source` session: it serves `patterns`, active or standby by
   * `priority` (lower takes over first); the answers arrive in the session's frames. Optional:
   * fake engines without failover leave it out (the source then gets UNAVAILABLE).
   */
  sourceRegister?(sessionId: number, reqId: number, patterns: string[], priority: number): void;
  /**
   * Validates and enqueues a source frame; returns publishes accepted; throws {code, message,
   * index?, field?}. With `grants`, a subject they do not permit refuses the whole frame
   * NOT_ENTITLED (`index`, `field: 'subject'`), checked while the engine decodes it. With
   * `sourceSessionId` (the publishing `/source` session), the frame's records are that source's:
   * stale `records.staleGraceMs` after its session closes unless published again.
   * With `drainWorker` (the calling transport's worker id), the caller drains its worker right
   * after: a frame the engine applies on this thread (its thread was idle) does not call that
   * worker's `onReady`. The bytes are read before this returns and not kept (a view of uWS's
   * message buffer needs no copy).
   */
  ingest(frame: Uint8Array | string, grants?: PublishGrants | null, sourceSessionId?: number | null, drainWorker?: number | null): number;
  /**
   * What sources sent that the engine has not applied yet (frames, UTF-8 bytes): drives source
   * flow control (handlers/source.ts). Absent in unit-test fakes: flow control is then off.
   */
  ingestQueue?(): { frames: number; bytes: number };
  /**
   * Resolves once the engine applied every source and container publish queued (from any
   * worker) before this call: `/source` answers `session.ping` after it (handlers/source.ts).
   * Rejects (`UNAVAILABLE: ...`) after shutdown or past 30 s. Absent in unit-test fakes: the pong
   * is then sent at once.
   */
  ingestBarrier?(): Promise<void>;
  /** Stops (true) or resumes (false) flushing to the session while its socket is backed up. */
  setBlocked(sessionId: number, blocked: boolean): void;
}

/** Error shape `ingest` throws (a JS Error with extra properties). */
export interface EngineError {
  code?: unknown;
  message?: unknown;
  index?: unknown;
  field?: unknown;
}

/** Engine calls a transport worker makes besides the handlers'. */
export interface TransportEngine extends EnginePort {
  /**
   * Registers this thread; `onReady` runs on this thread when frames are ready. Returns the worker
   * id. `topics`: the worker applies topic entries in its drains (transport/topics.ts).
   */
  registerWorker(onReady: () => void, topics?: boolean): number;
  unregisterWorker(workerId: number): void;
  /**
   * Moves everything ready for this worker's sessions into the caller's buffers (drain-runs.ts
   * `DrainBuffers`, `INDEX_STRIDE`): returns the entries taken, 0 when nothing is ready (the next
   * frame calls `onReady`), -1 when a buffer is too small (the index header names the sizes).
   * After a non-empty drain `onReady` is not called again: drain until 0. With `arm` the caller
   * does not drain again: the next frame calls `onReady` (a worker sending what its own `ingest`
   * readied, which nothing else readies meanwhile but the engine thread and the order journal).
   */
  drainInto(workerId: number, data: Uint8Array, index: Uint32Array, samples: Float64Array, arm?: boolean): number;
  /** The engine keeps the origin ts of one record message or updated view row in `every` of this worker's sessions (`drainInto` samples). */
  setLatencySampling(workerId: number, every: number): void;
  stats(): object;
  /** The materialised views (admin views table); rejects when the engine thread does not answer. */
  viewStats(): Promise<EngineViewStat[]>;
}

/** `orderSubmitFrame`: the frame is not an `order.submit` the engine reads as is; decode it. */
export const ORDER_FRAME_NOT_TAKEN = -1;
/** `orderSubmitFrame`: the order is permitted but the caller had no order token; nothing submitted. */
export const ORDER_FRAME_NO_TOKEN = -2;
