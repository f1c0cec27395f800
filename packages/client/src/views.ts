/**
 * Server-side views in the SDK (`client.view(...)`): one `view.create` per handle, the window's
 * rows kept in view order from `view.created` / `view.rows` / `view.size`, `move()` as
 * `view.change`, `close()` as `view.close`. After a reconnect every open view is resumed
 * (`view.resume` with the previous session's epoch and id, the view's id there and the last seq
 * held): the server either continues it, sending only what it missed (`view.resumed`, then the
 * messages lost in flight replayed with their seqs and reqIds, then ordinary diffs), or opens it afresh (`view.created` flagged `reset`, as after a login to a
 * server that does not hold it); a fresh snapshot replaces the rows, and `onRows` names the rows
 * it changed (`updated`), so a grid patches them in place either way.
 *
 * Every diff is applied, whatever its reqId (the server diffs against what it last sent, so a
 * skipped diff would corrupt the window); the handler is only called for diffs tagged with the
 * latest `view.create` / `view.change`, so a scrolling UI never renders an outdated window.
 */

import type { ViewClientMessage, ViewCreated, ViewResumed, ViewRowImage, ViewRows, ViewSize, ViewSortKey, ViewWindow } from '@tidewire/protocol';
import type { TidewireError } from './errors.js';

/** What `client.view()` asks for. */
export interface ViewRequest {
  /** Container subject, e.g. `/CONTAINER/PRODUCTS`. */
  container: string;
  /** Filter expression (docs/views.md); omitted: every member. */
  filter?: string;
  /** Sort keys; omitted: the container's order. */
  sort?: ViewSortKey[];
  /** The rows to stream: `size` rows from `offset`. */
  window: ViewWindow;
}

/**
 * One row of a view window: the record as last received (the wire's `ViewRowImage` with later
 * `view.rows` updates applied; field types are not kept). `index`: rank in the whole view.
 */
export type ViewRow = Omit<ViewRowImage, 'types'>;

/** Callbacks of `client.view()`. */
export interface ViewHandler {
  /**
   * The window changed: `rows` in view order (`rows[i].index` = offset + i; fewer than `size`
   * at the end of the view), `count` rows in the whole view, `updated` ids of rows whose fields
   * changed since the last call (for flashing and for patching a grid in place: it includes rows
   * changed by diffs of an earlier window, which were applied without a call). `rows` is the
   * SDK's array: copy it to keep it.
   */
  onRows(rows: readonly ViewRow[], count: number, updated: ReadonlySet<number>): void;
  /** The server refused the view (bad filter, unknown view, limit) or a request failed. */
  onError?(error: TidewireError): void;
}

/** A handle on an open view. */
export interface ViewHandle {
  /** Moves (scrolls) or resizes the window; the filter is not recomputed on the server. */
  move(offset: number, size: number): void;
  /** Closes the view (idempotent); no callback follows. */
  close(): void;
  /** The window's rows as last received. */
  readonly rows: readonly ViewRow[];
  /** Rows in the whole view (0 until `view.created`). */
  readonly count: number;
}

/** What the views need from their client. */
export interface ViewsPort {
  loggedIn(): boolean;
  /** Sends a message; false when not connected. */
  send(m: ViewClientMessage): boolean;
  takeReqId(): number;
  /** Reports a handler that threw. */
  report(error: unknown): void;
  /** Counts a `view.resume` answered: continued (`resumed`) or opened afresh (`reset`). */
  resumeAnswered(how: 'resumed' | 'reset'): void;
  /** Counts one view message replayed after a `view.resumed` (lost in flight before the drop). */
  replayed(): void;
}

/** The previous session a reconnect resumes views from (its `session.loggedIn`). */
export interface ResumeFrom {
  epoch: number;
  sessionId: number;
}

class OpenView implements ViewHandle {
  rows: ViewRow[] = [];
  count = 0;
  /** Server view id of the current session's view.create, once created. */
  viewId: number | undefined;
  /** Seq of the last view message applied (0: none; the server numbers them from 1). */
  seq = 0;
  /**
   * After `view.resumed`: the last seq the server sent before the drop; messages up to it are
   * replays (sent before, lost in flight), tagged with the reqIds of the previous session.
   */
  replayTo: number | undefined;
  /** reqId of the latest create/change: only its diffs reach the handler. */
  latestReq = -1;
  /**
   * Window offset the server used for diffs tagged with each reqId still in flight (kept across a
   * resume: replayed diffs carry the reqIds of the previous session).
   */
  readonly offsets = new Map<number, number>();
  /**
   * Ids of rows whose fields a diff of an earlier window changed (applied, no call): reported with
   * the next call, or a grid patching only `updated` rows would show them stale.
   */
  readonly missed = new Set<number>();
  closed = false;
  /** `move()` before `view.created`: send the window once the view exists. */
  moveAfterCreate = false;

  constructor(
    readonly views: Views,
    readonly request: ViewRequest,
    readonly handler: ViewHandler,
  ) {}

  move(offset: number, size: number): void {
    if (this.closed) return;
    this.request.window = { offset, size };
    this.views.change(this);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.views.close(this);
  }
}

/** Applies a `view.rows` to `rows` (window in view order, first row at `offset`). */
export function applyViewRows(rows: ViewRow[], offset: number, m: ViewRows): Set<number> {
  const gone = new Set<number>(m.left ?? []);
  for (const mv of m.moved ?? []) gone.add(mv.id);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const kept = gone.size > 0 ? rows.filter((r) => !gone.has(r.id)) : rows.slice();
  const placed: Array<[number, ViewRow]> = [];
  for (const mv of m.moved ?? []) {
    const r = byId.get(mv.id);
    if (r !== undefined) placed.push([mv.index, r]);
  }
  for (const e of m.entered ?? []) placed.push([e.index, toRow(e)]);
  placed.sort((a, b) => a[0] - b[0]);
  for (const [index, r] of placed) kept.splice(Math.max(0, Math.min(kept.length, index - offset)), 0, r);
  kept.forEach((r, i) => (r.index = offset + i));
  const updated = new Set<number>();
  const now = new Map(kept.map((r) => [r.id, r]));
  for (const u of m.updated ?? []) {
    const r = now.get(u.id);
    if (r === undefined) continue;
    for (const [k, v] of Object.entries(u.fields)) {
      if (v === null) delete r.fields[k];
      else r.fields[k] = v;
    }
    r.seq = u.seq;
    r.ts = u.ts;
    updated.add(u.id);
  }
  rows.length = 0;
  for (const r of kept) rows.push(r);
  return updated;
}

function toRow(r: ViewRowImage): ViewRow {
  return { index: r.index, id: r.id, subject: r.subject, seq: r.seq, ts: r.ts, fields: { ...r.fields } };
}

const NONE: ReadonlySet<number> = new Set();

/** Ids of `after`'s rows that `before` lacks, holds at another index or at another seq. */
function changedRows(before: readonly ViewRow[], after: readonly ViewRow[]): Set<number> {
  const held = new Map(before.map((r) => [r.id, r]));
  const out = new Set<number>();
  for (const r of after) {
    const old = held.get(r.id);
    if (old === undefined || old.seq !== r.seq || old.index !== r.index) out.add(r.id);
  }
  return out;
}

/** Every view of one client. */
export class Views {
  private readonly open = new Set<OpenView>();
  /** reqId of a pending view.create -> its view. */
  private readonly creating = new Map<number, OpenView>();
  /** Server view id -> view (current session). */
  private readonly byId = new Map<number, OpenView>();

  constructor(private readonly port: ViewsPort) {}

  /** Opens a view (now, or at the next login). */
  add(request: ViewRequest, handler: ViewHandler): ViewHandle {
    const v = new OpenView(this, { ...request, window: { ...request.window } }, handler);
    this.open.add(v);
    if (this.port.loggedIn()) this.create(v);
    return v;
  }

  /**
   * After every login: views of the previous session are resumed from it (`from`: a reconnect to
   * a server that told its epoch), the others created (the server may have forgotten them).
   */
  onLoggedIn(from?: ResumeFrom): void {
    this.creating.clear();
    this.byId.clear();
    for (const v of this.open) {
      const held = from !== undefined && v.viewId !== undefined && v.seq > 0 ? { ...from, viewId: v.viewId, seq: v.seq } : undefined;
      v.viewId = undefined;
      v.moveAfterCreate = false;
      this.create(v, held);
    }
  }

  /** Sends `view.create`, or `view.resume` of `held` (the view as the previous session knew it). */
  private create(v: OpenView, held?: ResumeFrom & { viewId: number; seq: number }): void {
    const reqId = this.port.takeReqId();
    const r = v.request;
    const m: ViewClientMessage = held === undefined
      ? { type: 'view.create', reqId, container: r.container, window: { ...r.window } }
      : { type: 'view.resume', reqId, epoch: held.epoch, sessionId: held.sessionId, viewId: held.viewId, seq: held.seq, container: r.container, window: { ...r.window } };
    if (r.filter !== undefined) m.filter = r.filter;
    if (r.sort !== undefined) m.sort = r.sort.map((k) => ({ field: k.field, dir: k.dir }));
    v.latestReq = reqId;
    v.replayTo = undefined;
    if (held === undefined) v.offsets.clear();
    v.offsets.set(reqId, r.window.offset);
    this.creating.set(reqId, v);
    this.port.send(m);
  }

  change(v: OpenView): void {
    if (!this.port.loggedIn()) return; // the next login's create carries the window
    if (v.viewId === undefined) {
      v.moveAfterCreate = true; // sent once the view exists
      return;
    }
    const reqId = this.port.takeReqId();
    v.latestReq = reqId;
    v.offsets.set(reqId, v.request.window.offset);
    this.port.send({ type: 'view.change', reqId, viewId: v.viewId, window: { ...v.request.window } });
  }

  close(v: OpenView): void {
    this.open.delete(v);
    for (const [reqId, c] of this.creating) if (c === v) this.creating.delete(reqId);
    if (v.viewId === undefined) return;
    this.byId.delete(v.viewId);
    if (this.port.loggedIn()) this.port.send({ type: 'view.close', reqId: this.port.takeReqId(), viewId: v.viewId });
  }

  /**
   * Applies a `view.created` / `view.resumed` / `view.rows` / `view.size` to its view (unknown
   * views: ignored).
   */
  deliver(m: ViewCreated | ViewResumed | ViewRows | ViewSize): void {
    if (m.type === 'view.resumed') {
      // the view continues: its rows stay, what it missed follows as ordinary diffs
      const v = this.creating.get(m.reqId);
      if (v === undefined) return;
      this.creating.delete(m.reqId);
      v.viewId = m.viewId;
      // the messages from the held seq + 1 to m.seq are replayed next; v.seq moves as they are
      // applied (a drop mid-replay resumes from what was really applied)
      if (m.seq > v.seq) v.replayTo = m.seq;
      this.byId.set(m.viewId, v);
      this.port.resumeAnswered('resumed');
      if (v.moveAfterCreate) {
        v.moveAfterCreate = false;
        this.change(v);
      }
      return;
    }
    if (m.type === 'view.created') {
      const v = this.creating.get(m.reqId);
      if (v === undefined) return;
      this.creating.delete(m.reqId);
      if (m.reset === true) this.port.resumeAnswered('reset');
      // a fresh view: the previous session's requests are done with
      const own = v.offsets.get(m.reqId);
      v.offsets.clear();
      if (own !== undefined) v.offsets.set(m.reqId, own);
      v.viewId = m.viewId;
      v.seq = m.seq ?? 0;
      this.byId.set(m.viewId, v);
      const before = v.rows;
      v.rows = m.rows.map(toRow);
      v.count = m.count;
      // created again after a reconnect: the snapshot is diffed against the rows held, so a grid
      // patches the rows that changed (new, moved or updated while disconnected) in place
      const changed = before.length === 0 ? NONE : changedRows(before, v.rows);
      if (v.moveAfterCreate) {
        // moved before the view existed: ask for the window wanted now
        v.moveAfterCreate = false;
        for (const id of changed) v.missed.add(id);
        this.change(v);
        return;
      }
      this.notify(v, changed);
      return;
    }
    const v = this.byId.get(m.viewId);
    if (v === undefined) return;
    // a replay ends with the message numbered replayTo: the grid is told then, whatever its reqId
    let replayEnd = false;
    if (v.replayTo !== undefined && m.seq !== undefined && m.seq <= v.replayTo) {
      this.port.replayed();
      replayEnd = m.seq === v.replayTo;
      if (replayEnd) v.replayTo = undefined;
    }
    if (m.seq !== undefined) v.seq = m.seq;
    if (m.type === 'view.size') {
      v.count = m.count;
      this.notify(v, NONE);
      return;
    }
    const offset = v.offsets.get(m.reqId) ?? v.request.window.offset;
    for (const r of v.offsets.keys()) if (r !== m.reqId && r !== v.latestReq && r < m.reqId) v.offsets.delete(r);
    const updated = applyViewRows(v.rows, offset, m);
    if (m.reqId === v.latestReq || replayEnd) this.notify(v, updated);
    else for (const id of updated) v.missed.add(id);
  }

  /** An `error` reply: true when it answered a view request (reported to that view). */
  error(reqId: number | undefined, error: TidewireError): boolean {
    if (reqId === undefined) return false;
    const v = this.creating.get(reqId) ?? [...this.open].find((x) => x.latestReq === reqId);
    if (v === undefined) return false;
    if (this.creating.delete(reqId)) this.open.delete(v);
    try {
      v.handler.onError?.(error);
    } catch (e) {
      this.port.report(e);
    }
    return true;
  }

  /** Forgets every view (client closed for good). */
  reset(): void {
    this.open.clear();
    this.creating.clear();
    this.byId.clear();
  }

  private notify(v: OpenView, updated: ReadonlySet<number>): void {
    if (v.closed) return;
    let all = updated;
    if (v.missed.size > 0) {
      all = new Set([...v.missed, ...updated]);
      v.missed.clear();
    }
    try {
      v.handler.onRows(v.rows, v.count, all);
    } catch (e) {
      this.port.report(e);
    }
  }
}

