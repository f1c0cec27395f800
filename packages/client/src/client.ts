/**
 * TidewireClient: one WebSocket connection to a Tidewire server's `/stream`: login, record
 * subscriptions (shared per subject), heartbeats with latency reports, automatic reconnect with
 * re-login (token first) and resubscription. Runs in browsers and Node 20 (pass `ws`'s WebSocket).
 */

import {
  CloseCodes,
  DEFAULT_HEARTBEAT_MS,
  MAX_REQ_ID,
  MAX_SUBJECT_BYTES,
  MAX_SUBJECTS_PER_REQUEST,
  SUBJECT_PATTERN,
  decodeClientMessage,
  decodeServerFrame,
  encodeClientMessage,
  isDecodeFailure,
  type ClientMessage,
  type OrderAck,
  type Prefs,
  type PrefsGet,
  type PrefsPatch,
  type PrefsSet,
  type ServerMessage,
  type SessionLoggedIn,
} from '@tidewire/protocol';
import { AdminStream, type AdminMetricsHandler, type AdminMetricsStream } from './admin-stream.js';
import { backoffDelayMs } from './backoff.js';
import { Views, type ViewHandle, type ViewHandler, type ViewRequest } from './views.js';
import { TidewireError } from './errors.js';
import { LatencyTracker } from './latency.js';
import { Orders, type OrderAmendment, type OrderRequest } from './orders.js';
import { Statements, type StatementInfo } from './statements.js';
import { SubscriptionTable, type Listener } from './subscriptions.js';
import type {
  ClientOptions,
  ClientStats,
  ConnectionState,
  LatencySnapshot,
  RecordHandler,
  SessionInfo,
  StateDetail,
  Subscription,
  WebSocketConstructor,
  WebSocketLike,
} from './types.js';

const OPEN = 1; // WebSocket.OPEN
/** Close code the client uses when it gives up on a silent server (private range 4000-4999). */
const HEARTBEAT_TIMEOUT_CODE = 4000;

type Timer = ReturnType<typeof setTimeout>;
type StateListener = (state: ConnectionState, detail?: StateDetail) => void;
type ErrorListener = (error: TidewireError) => void;
type LoginAuth = { user: string; password: string } | { token: string };

interface PendingRequest {
  resolve(m: ServerMessage): void;
  reject(error: TidewireError): void;
  timer: Timer;
}

function defaultClock(): number {
  return performance.timeOrigin + performance.now();
}

/** Close codes after which reconnecting cannot help (see CloseCodes in @tidewire/protocol). */
const FINAL_CLOSE_CODES: ReadonlySet<number> = new Set(
  Object.values(CloseCodes)
    .filter((c) => !c.reconnect)
    .map((c) => c.code),
);

/** The URLs of `options` (`url` or `urls`); throws BAD_REQUEST naming the bad one. */
function serverUrls(options: ClientOptions): readonly string[] {
  if (options.url !== undefined && options.urls !== undefined) {
    throw new TidewireError('BAD_REQUEST', "give 'url' or 'urls', not both");
  }
  if (options.urls !== undefined && (!Array.isArray(options.urls) || options.urls.length === 0)) {
    throw new TidewireError('BAD_REQUEST', `'urls' (${JSON.stringify(options.urls)}) must be a non-empty array of ws:// or wss:// URLs`);
  }
  const urls = options.urls ?? [options.url];
  urls.forEach((url, i) => {
    if (typeof url !== 'string' || !/^wss?:\/\//.test(url)) {
      const name = options.urls === undefined ? "'url'" : `'urls[${i}]'`;
      throw new TidewireError('BAD_REQUEST', `${name} (${JSON.stringify(url)}) must start with ws:// or wss://`);
    }
  });
  return Object.freeze([...(urls as string[])]);
}

/** A client of one Tidewire server, or of the nodes of a cluster (`urls`). See packages/client/README.md for the lifecycle. */
export class TidewireClient {
  /** Server URLs, tried round-robin from `urlIndex`. */
  private readonly urls: readonly string[];
  private urlIndex = 0;
  /** URL of the last connection that logged in (a re-login elsewhere is a failover). */
  private loggedInUrl: string | undefined;
  private readonly WebSocketImpl: WebSocketConstructor;
  private credentials: { user: string; password: string } | undefined;
  private readonly reconnectPolicy: { initialDelayMs: number; maxDelayMs: number; maxAttempts: number } | false;
  private readonly requestTimeoutMs: number;
  private readonly clock: () => number;

  private ws: WebSocketLike | undefined;
  private currentState: ConnectionState = 'closed';
  private currentSession: SessionInfo | undefined;
  private token: string | undefined;
  private nextReqId = 1;
  private readonly requests = new Map<number, PendingRequest>();
  private readonly counters: ClientStats = {
    frames: 0,
    messages: 0,
    images: 0,
    updates: 0,
    gaps: 0,
    outOfOrder: 0,
    orphans: 0,
    badFrames: 0,
    reconnects: 0,
    resumed: 0,
    resets: 0,
    viewResumes: 0,
    viewResets: 0,
    viewReplays: 0,
    failovers: 0,
    rttMs: undefined,
  };
  private readonly table: SubscriptionTable;
  private readonly latencyTracker = new LatencyTracker();
  private readonly admin = new AdminStream({
    loggedIn: () => this.currentState === 'loggedIn',
    request: (type) => this.request({ type, reqId: this.takeReqId() }),
    report: (e) => this.emitError(new TidewireError('HANDLER_FAILED', `an admin metrics handler threw: ${String(e)}`, { cause: e })),
  });
  private readonly viewSet = new Views({
    loggedIn: () => this.currentState === 'loggedIn',
    send: (m) => this.send(m),
    takeReqId: () => this.takeReqId(),
    report: (e) => this.emitError(new TidewireError('HANDLER_FAILED', `a view handler threw: ${String(e)}`, { cause: e })),
    resumeAnswered: (how) => {
      if (how === 'resumed') this.counters.viewResumes++;
      else this.counters.viewResets++;
    },
    replayed: () => {
      this.counters.viewReplays++;
    },
  });
  private readonly orders: Orders;
  private readonly statements = new Statements({
    loggedIn: () => this.currentState === 'loggedIn',
    takeReqId: () => this.takeReqId(),
    request: (m) => this.request(m),
    report: (e) => this.emitError(e),
  });
  private readonly stateListeners = new Set<StateListener>();
  private readonly errorListeners = new Set<ErrorListener>();

  /** True between connect()/login() and close() or a final close. */
  private wanted = false;
  private everLoggedIn = false;
  private userLogin: Promise<SessionInfo> | undefined;
  private attempts = 0;
  private reconnectTimer: Timer | undefined;
  private heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  private pongWatchdog: Timer | undefined;
  private toSubscribe = new Set<string>();
  private toUnsubscribe = new Set<string>();
  private flushQueued = false;
  /** Rejects the open() still waiting for its socket, if any. */
  private abortOpen: ((error: TidewireError) => void) | undefined;

  /** @throws TidewireError BAD_REQUEST when no WebSocket constructor is available or options are invalid. */
  constructor(options: ClientOptions) {
    const impl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (impl === undefined) {
      throw new TidewireError('BAD_REQUEST', "no global WebSocket here: pass options.WebSocket (in Node: WebSocket from 'ws')");
    }
    this.urls = serverUrls(options);
    const r = options.reconnect === false ? false : (options.reconnect ?? {});
    this.reconnectPolicy =
      r === false
        ? false
        : { initialDelayMs: r.initialDelayMs ?? 250, maxDelayMs: r.maxDelayMs ?? 10_000, maxAttempts: r.maxAttempts ?? Infinity };
    this.WebSocketImpl = impl;
    this.credentials = options.credentials;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.clock = options.clock ?? defaultClock;
    this.table = new SubscriptionTable(this.counters, (e) => this.emitError(e));
    this.orders = new Orders(
      { loggedIn: () => this.currentState === 'loggedIn', takeReqId: () => this.takeReqId(), request: (m) => this.request(m) },
      this.clock(),
    );
  }

  /** The server URL the client is connected to, or will try next. */
  get url(): string {
    return this.urls[this.urlIndex]!;
  }

  /** Where the connection is; see ConnectionState. */
  get state(): ConnectionState {
    return this.currentState;
  }

  /** The latest session the server granted; undefined before the first login and after close(). */
  get session(): SessionInfo | undefined {
    return this.currentSession;
  }

  /**
   * Opens the connection and logs in with `options.credentials`. Resolves with the session.
   * The first connect does not retry: it rejects (CONNECTION_FAILED, TIMEOUT, BAD_CREDENTIALS, ...)
   * and leaves the client `closed`. Reconnects apply once logged in.
   */
  connect(): Promise<SessionInfo> {
    if (this.credentials === undefined) {
      return Promise.reject(new TidewireError('BAD_REQUEST', 'connect() needs options.credentials; or call login(user, password)'));
    }
    return this.login(this.credentials.user, this.credentials.password);
  }

  /**
   * Logs in with a password, opening the connection first when needed; the credentials are kept
   * for reconnects. Concurrent calls share one attempt. Rejects with ALREADY_LOGGED_IN when logged in.
   */
  login(user: string, password: string): Promise<SessionInfo> {
    if (this.currentState === 'loggedIn') {
      return Promise.reject(new TidewireError('ALREADY_LOGGED_IN', `already logged in as ${this.currentSession?.user}`));
    }
    if (this.userLogin !== undefined) return this.userLogin;
    this.credentials = { user, password };
    this.wanted = true;
    this.clearReconnectTimer();
    const attempt = this.loginNow({ user, password }).finally(() => {
      this.userLogin = undefined;
    });
    this.userLogin = attempt;
    return attempt;
  }

  /**
   * Logs in with a session token from an earlier `session.loggedIn` (e.g. kept across a page
   * reload), opening the connection first when needed. Reconnects use the refreshed token; with no
   * password known, a refused token ends the session (state `closed`). Rejects with BAD_TOKEN when
   * the server refuses it, ALREADY_LOGGED_IN when logged in.
   */
  resume(token: string): Promise<SessionInfo> {
    if (this.currentState === 'loggedIn') {
      return Promise.reject(new TidewireError('ALREADY_LOGGED_IN', `already logged in as ${this.currentSession?.user}`));
    }
    if (this.userLogin !== undefined) return this.userLogin;
    this.wanted = true;
    this.clearReconnectTimer();
    const attempt = this.loginNow({ token }).finally(() => {
      this.userLogin = undefined;
    });
    this.userLogin = attempt;
    return attempt;
  }

  /**
   * Subscribes `handler` to one or more subjects. Subjects already subscribed by another call share
   * its server subscription and get the current image at once (in a microtask). Acknowledgements
   * arrive asynchronously through `onStatus`; an invalid subject gets `onStatus(subject, 'error')`.
   * Works before login: requests are sent once logged in.
   */
  subscribe(subjects: string | string[], handler: RecordHandler): Subscription {
    const list = [...new Set(typeof subjects === 'string' ? [subjects] : subjects)];
    const listener: Listener = { handler, active: true };
    const valid: string[] = [];
    for (const subject of list) {
      if (typeof subject === 'string' && subject.length <= MAX_SUBJECT_BYTES && SUBJECT_PATTERN.test(subject)) {
        valid.push(subject);
      } else {
        const rule = "must be '/' then '/'-separated segments of letters, digits and _.@:-";
        this.table.rejectFor(String(subject), listener, new TidewireError('BAD_REQUEST', `subject ${JSON.stringify(subject)} ${rule}`));
      }
    }
    for (const subject of this.table.add(valid, listener)) {
      this.toSubscribe.add(subject);
    }
    this.queueFlush();
    return {
      subjects: list,
      unsubscribe: () => {
        if (!listener.active) return;
        listener.active = false;
        for (const subject of this.table.remove(valid, listener)) {
          // never sent: just drop it; otherwise the server must hear about it
          if (!this.toSubscribe.delete(subject)) this.toUnsubscribe.add(subject);
        }
        this.queueFlush();
      },
    };
  }

  /**
   * The live admin metrics stream (admin role): `onMetrics` about once a second until `stop()`,
   * kept across reconnects. Non-admins get `onError` with NOT_ENTITLED. Works before login.
   */
  adminMetrics(handler: AdminMetricsHandler): AdminMetricsStream {
    return this.admin.add(handler);
  }

  /**
   * Opens a server-side view: `container` filtered by `filter`, sorted by `sort`, of which the
   * server streams `window`. `onRows` gets the window's rows (view order) and the row count after
   * `view.created` and every change; `move()` scrolls without a filter recompute; the view is
   * created again after each reconnect. Errors (bad filter: `field: 'filter'` with the position)
   * go to `onError`. Works before login.
   */
  view(request: ViewRequest, handler: ViewHandler): ViewHandle {
    return this.viewSet.add(request, handler);
  }

  /**
   * Submits an order (trader/admin roles). Resolves with its `order.ack`, which the server sends
   * only once the order is durable (journaled and fsynced). Rejects with `OrderRejectedError`
   * (code ORDER_REJECTED, `field` + `rule`: nothing changed), a server `error` (BAD_REQUEST,
   * NOT_ENTITLED, UNAVAILABLE when the server has no journal), BAD_REQUEST before sending when
   * the request is malformed, or DISCONNECTED / TIMEOUT / CLOSED: then the order's fate shows in
   * the blotter, and re-sending with the same `clientOrderId` is safe (a durable one is refused as
   * `duplicate`). Not queued while logged out: rejects at once with DISCONNECTED.
   * `clientOrderId` defaults to `${clientCreationMs}-${n}`; read it back from the ack.
   */
  submitOrder(order: OrderRequest): Promise<OrderAck> {
    return this.orders.submit(order);
  }

  /** Cancels an open order by its client order id; resolves with the ack (status `cancelled`). Rejections as `submitOrder`. */
  cancelOrder(clientOrderId: string): Promise<OrderAck> {
    return this.orders.cancel(clientOrderId);
  }

  /**
   * Changes an open order's total quantity and/or limit price (at least one; else BAD_REQUEST
   * before sending). Resolves with the ack. Rejections as `submitOrder`.
   */
  amendOrder(clientOrderId: string, change: OrderAmendment): Promise<OrderAck> {
    return this.orders.amend(clientOrderId, change);
  }

  /**
   * Starts statement `name` (docs/analytics.md) on the server; its results are the records
   * `/STAT/<name>/<key>`, members of `info.container` (open a `view` over it, or subscribe).
   * Created again after each reconnect (the server's statements belong to a session). Rejects as
   * described in statements.ts: a parse error is BAD_REQUEST with `field: 'statement'` (read its
   * column with `statementColumn(error)`). Not queued while logged out: DISCONNECTED.
   */
  createStatement(name: string, statement: string): Promise<StatementInfo> {
    return this.statements.create(name, statement);
  }

  /** Releases one reference to statement `name` (created by this client); NOT_FOUND when it holds none. */
  closeStatement(name: string): Promise<void> {
    return this.statements.close(name);
  }

  /**
   * The logged-in user's preferences stored on the server (`prefs.get`): `version` 0 and no keys
   * when nothing is stored yet. Rejects with UNAVAILABLE when the server keeps no preferences,
   * DISCONNECTED (not logged in: not queued), TIMEOUT or CLOSED.
   */
  async getPrefs(): Promise<{ prefs: Prefs; version: number }> {
    const reply = await this.prefsRequest({ type: 'prefs.get', reqId: this.takeReqId() });
    if (reply.type !== 'prefs.got') throw new TidewireError('INTERNAL', `prefs.get answered by ${reply.type}`);
    return { prefs: reply.prefs, version: reply.version };
  }

  /**
   * Saves some of the user's preferences (`prefs.set`): each key named gets its value, `null`
   * deletes it, other keys stay. Resolves once the server has them on disk. Rejects with
   * BAD_REQUEST before sending when the patch breaks the protocol's rules (key syntax, size),
   * LIMIT_EXCEEDED (the user's stored total), UNAVAILABLE, DISCONNECTED, TIMEOUT or CLOSED.
   */
  async setPrefs(patch: PrefsPatch): Promise<{ version: number; bytes: number }> {
    const reply = await this.prefsRequest({ type: 'prefs.set', reqId: this.takeReqId(), prefs: patch });
    if (reply.type !== 'prefs.saved') throw new TidewireError('INTERNAL', `prefs.set answered by ${reply.type}`);
    return { version: reply.version, bytes: reply.bytes };
  }

  /** Checks a prefs request with the protocol's decoder, then sends it (logged in only). */
  private prefsRequest(m: PrefsGet | PrefsSet): Promise<ServerMessage> {
    const d = decodeClientMessage(encodeClientMessage(m));
    if (isDecodeFailure(d)) return Promise.reject(new TidewireError(d.error.code, d.error.message, { field: d.error.field }));
    if (this.currentState !== 'loggedIn') return Promise.reject(new TidewireError('DISCONNECTED', `cannot send ${m.type}: not logged in`, { reqId: m.reqId }));
    return this.request(m);
  }

  /** Closes the connection for good (code 1000): no reconnect; in-flight requests reject with CLOSED. */
  close(): void {
    this.wanted = false;
    this.clearReconnectTimer();
    this.abortOpen?.(new TidewireError('CLOSED', 'the client was closed'));
    const ws = this.ws;
    this.ws = undefined;
    if (ws !== undefined) this.detach(ws, 1000, 'client closed');
    this.stopHeartbeat();
    this.rejectRequests(new TidewireError('CLOSED', 'the client was closed'));
    this.table.reset();
    this.viewSet.reset();
    this.statements.reset();
    this.currentSession = undefined;
    this.token = undefined;
    this.setState('closed');
  }

  /** Listens to state changes or unsolicited errors; returns a function that stops listening. */
  on(event: 'state', cb: StateListener): () => void;
  on(event: 'error', cb: ErrorListener): () => void;
  on(event: 'state' | 'error', cb: StateListener | ErrorListener): () => void {
    const set = (event === 'state' ? this.stateListeners : this.errorListeners) as Set<typeof cb>;
    set.add(cb);
    return () => set.delete(cb);
  }

  /** Origin timestamp -> receipt latency of updates: last heartbeat period, current period, lifetime. */
  latency(): LatencySnapshot {
    return this.latencyTracker.snapshot();
  }

  /** Reports that an update with origin timestamp `originTs` (epoch ms) was painted now. */
  notePaint(originTs: number): void {
    this.latencyTracker.paint(this.clock() - originTs);
  }

  /** Counters since creation (gaps, out-of-order, reconnects, ...); a copy. */
  stats(): ClientStats {
    return { ...this.counters };
  }

  // ---------------------------------------------------------------------------------------------
  // connection and login

  private async loginNow(auth: LoginAuth): Promise<SessionInfo> {
    try {
      if (this.ws === undefined || this.ws.readyState !== OPEN) await this.openFirst();
      return await this.authenticate(auth);
    } catch (e) {
      const error = e instanceof TidewireError ? e : new TidewireError('CONNECTION_FAILED', String(e), { cause: e });
      if (this.currentState !== 'loggedIn' && this.wanted) this.finish({ reason: error.message });
      throw error;
    }
  }

  /**
   * The first connect: each URL once, in order from the current one, until one opens. Rejects
   * with the last URL's CONNECTION_FAILED / TIMEOUT (naming every URL tried), or at once when the
   * attempt was aborted (close(), a newer login).
   */
  private async openFirst(): Promise<void> {
    const tried: string[] = [];
    for (let i = 0; ; i++) {
      try {
        await this.open('connecting');
        return;
      } catch (e) {
        const failed = e instanceof TidewireError && (e.code === 'CONNECTION_FAILED' || e.code === 'TIMEOUT');
        if (!failed || !this.wanted || this.urls.length === 1) throw e;
        tried.push(e.message);
        if (i + 1 >= this.urls.length) throw new TidewireError(e.code, `no server answered: ${tried.join('; ')}`, { cause: e });
        this.urlIndex = (this.urlIndex + 1) % this.urls.length;
      }
    }
  }

  /** Opens a socket to the current URL; resolves when open. Rejects CONNECTION_FAILED / TIMEOUT (the socket is dropped). */
  private open(state: 'connecting' | 'reconnecting'): Promise<void> {
    const url = this.url;
    return new Promise((resolve, reject) => {
      let ws: WebSocketLike;
      try {
        ws = new this.WebSocketImpl(url);
      } catch (e) {
        reject(new TidewireError('CONNECTION_FAILED', `cannot open ${url}: ${String(e)}`, { cause: e }));
        return;
      }
      const previous = this.ws;
      if (previous !== undefined) this.detach(previous, 1000, 'replaced by a new connection');
      this.abortOpen?.(new TidewireError('DISCONNECTED', 'replaced by a new connection'));
      this.ws = ws;
      this.setState(state);
      let opened = false;
      const timer = setTimeout(() => {
        this.abortOpen = undefined;
        if (this.ws === ws) this.ws = undefined;
        this.detach(ws, 1000, 'open timed out');
        reject(new TidewireError('TIMEOUT', `${url} did not open within ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      // a newer open() (a login() during a reconnect) settles this one instead of leaving it hanging
      this.abortOpen = (error) => {
        clearTimeout(timer);
        this.abortOpen = undefined;
        reject(error);
      };
      ws.onopen = () => {
        clearTimeout(timer);
        this.abortOpen = undefined;
        if (this.ws !== ws) return;
        opened = true;
        this.setState('open');
        resolve();
      };
      ws.onerror = () => {}; // a close event follows; `ws` throws on 'error' events nobody listens to
      ws.onclose = (event) => {
        clearTimeout(timer);
        if (this.ws !== ws) return;
        if (!opened) this.abortOpen = undefined;
        if (!opened) {
          this.ws = undefined;
          reject(new TidewireError('CONNECTION_FAILED', `cannot open ${url} (close code ${event.code})`));
          return;
        }
        this.onSocketClosed({ code: event.code, reason: event.reason });
      };
      ws.onmessage = (event) => {
        if (this.ws !== ws) return;
        this.onFrame(event.data);
      };
    });
  }

  /** Sends session.login; on success the session is live (heartbeat, resubscription). */
  private async authenticate(auth: LoginAuth): Promise<SessionInfo> {
    const reqId = this.takeReqId();
    const reply = await this.request({ type: 'session.login', reqId, ...auth });
    if (reply.type !== 'session.loggedIn') {
      throw new TidewireError('INTERNAL', `session.login was answered with ${reply.type}`);
    }
    return this.loggedIn(reply);
  }

  private loggedIn(m: SessionLoggedIn): SessionInfo {
    const { type: _type, reqId: _reqId, ...info } = m;
    // the previous connection's epoch: the table kept its records for a resume (onSocketClosed)
    const resumeEpoch = this.everLoggedIn ? this.currentSession?.epoch : undefined;
    const resumeFrom = resumeEpoch === undefined || this.currentSession === undefined ? undefined : { epoch: resumeEpoch, sessionId: this.currentSession.sessionId };
    this.currentSession = info;
    this.token = info.token;
    this.everLoggedIn = true;
    this.loggedInUrl = this.url;
    this.attempts = 0;
    this.setState('loggedIn');
    this.startHeartbeat(info.heartbeatMs);
    // everything the table holds is subscribed on first login; after a reconnect it is resumed
    // when the previous server told its epoch (else subscribed afresh: fresh images)
    this.toUnsubscribe.clear();
    if (resumeEpoch === undefined) {
      this.toSubscribe = new Set(this.table.subjects());
    } else {
      this.toSubscribe.clear();
      this.resumeRecords(resumeEpoch, this.table.subjects());
    }
    this.flush();
    this.admin.onLoggedIn();
    this.viewSet.onLoggedIn(resumeFrom);
    this.statements.onLoggedIn();
    return info;
  }

  /** The socket closed by itself (server close, network drop, heartbeat timeout). */
  private onSocketClosed(detail: StateDetail): void {
    this.ws = undefined;
    this.stopHeartbeat();
    this.rejectRequests(new TidewireError('DISCONNECTED', `connection closed (${detail.code ?? '-'} ${detail.reason ?? ''})`.trim()));
    // a server that told its epoch takes a resume: keep the records (their seqs) until then
    this.table.reset(this.currentSession?.epoch !== undefined);
    const final = detail.code !== undefined && FINAL_CLOSE_CODES.has(detail.code);
    if (!this.wanted) this.setState('closed', detail);
    else if (this.userLogin !== undefined) return; // the login's own catch settles the state
    else if (!this.everLoggedIn || this.reconnectPolicy === false || final) this.finish(detail);
    else this.scheduleReconnect(detail);
  }

  private scheduleReconnect(detail: StateDetail): void {
    const policy = this.reconnectPolicy;
    if (policy === false) return this.finish(detail);
    this.attempts++;
    if (this.attempts > policy.maxAttempts) {
      return this.finish({ ...detail, reason: `gave up after ${policy.maxAttempts} reconnect attempts` });
    }
    this.setState('reconnecting', detail);
    // several URLs: every attempt goes to the next one (the current one just failed), and the
    // backoff grows per round over all of them, so a dead node costs one short delay, not a doubling
    const n = this.urls.length;
    this.urlIndex = (this.urlIndex + 1) % n;
    const delay = backoffDelayMs(Math.ceil(this.attempts / n), policy.initialDelayMs, policy.maxDelayMs);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.reconnect();
    }, delay);
  }

  private async reconnect(): Promise<void> {
    try {
      await this.open('reconnecting');
    } catch {
      if (this.wanted && this.reconnectTimer === undefined && this.userLogin === undefined) this.scheduleReconnect({});
      return;
    }
    try {
      const previousUrl = this.loggedInUrl;
      await this.relogin();
      this.counters.reconnects++;
      if (this.url !== previousUrl) this.counters.failovers++;
    } catch (e) {
      const error = e instanceof TidewireError ? e : new TidewireError('INTERNAL', String(e), { cause: e });
      if (this.ws === undefined || !this.wanted || this.userLogin !== undefined) return; // already handled
      const ws = this.ws;
      this.ws = undefined;
      this.detach(ws, 1000, 'login failed');
      this.stopHeartbeat();
      this.rejectRequests(new TidewireError('DISCONNECTED', 'login failed'));
      if (error.retryable) {
        this.scheduleReconnect({ reason: error.message });
      } else {
        this.emitError(error);
        this.finish({ reason: error.message });
      }
    }
  }

  /** Token first (unless expired), falling back to the password on BAD_TOKEN. */
  private async relogin(): Promise<SessionInfo> {
    const token = this.token;
    const expiresAt = this.currentSession?.tokenExpiresAt ?? Infinity;
    if (token !== undefined && expiresAt > this.clock()) {
      try {
        return await this.authenticate({ token });
      } catch (e) {
        if (!(e instanceof TidewireError) || e.code !== 'BAD_TOKEN' || this.credentials === undefined) throw e;
        this.token = undefined;
      }
    }
    if (this.credentials === undefined) {
      throw new TidewireError('BAD_TOKEN', 'the session token was refused and no password is known');
    }
    return this.authenticate(this.credentials);
  }

  /** Gives up: state `closed` with `detail`, nothing in flight. */
  private finish(detail: StateDetail): void {
    this.wanted = false;
    this.clearReconnectTimer();
    this.abortOpen?.(new TidewireError('DISCONNECTED', detail.reason ?? 'connection closed'));
    const ws = this.ws;
    this.ws = undefined;
    if (ws !== undefined) this.detach(ws, 1000, detail.reason ?? 'closed');
    this.stopHeartbeat();
    this.rejectRequests(new TidewireError('DISCONNECTED', detail.reason ?? 'connection closed'));
    this.table.reset();
    this.setState('closed', detail);
  }

  /** Stops listening to a socket and closes it (`terminate` when available: no closing handshake). */
  private detach(ws: WebSocketLike, code: number, reason: string): void {
    ws.onopen = null;
    ws.onmessage = null;
    ws.onclose = null;
    ws.onerror = () => {};
    try {
      const terminate = (ws as { terminate?: () => void }).terminate;
      if (code === HEARTBEAT_TIMEOUT_CODE && typeof terminate === 'function') terminate.call(ws);
      else ws.close(code, reason);
    } catch {
      // closing a socket that never opened throws in some implementations; it is gone either way
    }
  }

  private clearReconnectTimer(): void {
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // heartbeats

  private startHeartbeat(heartbeatMs: number): void {
    this.stopHeartbeat();
    const period = Number.isFinite(heartbeatMs) && heartbeatMs > 0 ? heartbeatMs : DEFAULT_HEARTBEAT_MS;
    this.heartbeatTimer = setInterval(() => this.ping(period), period);
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer !== undefined) clearInterval(this.heartbeatTimer);
    if (this.pongWatchdog !== undefined) clearTimeout(this.pongWatchdog);
    this.heartbeatTimer = undefined;
    this.pongWatchdog = undefined;
  }

  private ping(periodMs: number): void {
    const latency = this.latencyTracker.rotate();
    if (!this.send({ type: 'session.ping', reqId: this.takeReqId(), ts: this.clock(), latency })) return;
    // armed by the first unanswered ping; any pong disarms it
    this.pongWatchdog ??= setTimeout(() => this.heartbeatTimedOut(periodMs), 2 * periodMs);
  }

  private heartbeatTimedOut(periodMs: number): void {
    this.pongWatchdog = undefined;
    const ws = this.ws;
    if (ws === undefined) return;
    const reason = `no session.pong within ${2 * periodMs} ms`;
    this.detach(ws, HEARTBEAT_TIMEOUT_CODE, reason);
    this.onSocketClosed({ code: HEARTBEAT_TIMEOUT_CODE, reason });
  }

  // ---------------------------------------------------------------------------------------------
  // requests and frames

  private takeReqId(): number {
    const id = this.nextReqId;
    this.nextReqId = id >= MAX_REQ_ID ? 1 : id + 1;
    return id;
  }

  private send(m: ClientMessage): boolean {
    const ws = this.ws;
    if (ws === undefined || ws.readyState !== OPEN) return false;
    ws.send(encodeClientMessage(m));
    return true;
  }

  /** Sends a request and resolves with its reply; rejects with the server's error or TIMEOUT. */
  private request(m: ClientMessage): Promise<ServerMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.requests.delete(m.reqId);
        reject(new TidewireError('TIMEOUT', `${m.type} #${m.reqId}: no reply within ${this.requestTimeoutMs} ms`, { reqId: m.reqId }));
      }, this.requestTimeoutMs);
      // registered before sending: a transport may deliver the reply synchronously inside send()
      this.requests.set(m.reqId, { resolve, reject, timer });
      if (!this.send(m)) {
        this.requests.delete(m.reqId);
        clearTimeout(timer);
        reject(new TidewireError('DISCONNECTED', `cannot send ${m.type}: not connected`, { reqId: m.reqId }));
      }
    });
  }

  private rejectRequests(error: TidewireError): void {
    const pending = [...this.requests.values()];
    this.requests.clear();
    for (const r of pending) {
      clearTimeout(r.timer);
      r.reject(error);
    }
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  /** Sends queued unsubscribes, then subscribes (so unsubscribe + resubscribe of a subject works). */
  private flush(): void {
    if (this.currentState !== 'loggedIn') return; // loggedIn() resubscribes everything
    const gone = [...this.toUnsubscribe];
    const fresh = [...this.toSubscribe];
    this.toUnsubscribe.clear();
    this.toSubscribe.clear();
    for (let i = 0; i < gone.length; i += MAX_SUBJECTS_PER_REQUEST) {
      const subjects = gone.slice(i, i + MAX_SUBJECTS_PER_REQUEST);
      this.request({ type: 'record.unsubscribe', reqId: this.takeReqId(), subjects }).catch((e: TidewireError) => {
        if (e.code !== 'DISCONNECTED' && e.code !== 'CLOSED') this.emitError(e);
      });
    }
    for (let i = 0; i < fresh.length; i += MAX_SUBJECTS_PER_REQUEST) {
      const subjects = fresh.slice(i, i + MAX_SUBJECTS_PER_REQUEST);
      this.request({ type: 'record.subscribe', reqId: this.takeReqId(), subjects }).then(
        (reply) => {
          if (reply.type === 'record.subscribed') this.table.acknowledge(reply.records);
        },
        (e: TidewireError) => {
          // after a disconnect everything is resubscribed on the next login
          if (e.code !== 'DISCONNECTED' && e.code !== 'CLOSED') this.table.fail(subjects, e, e.code !== 'TIMEOUT');
        },
      );
    }
  }

  /**
   * Sends `record.resume` for `subjects` (held records with their ids and seqs, from `epoch`), in
   * requests of at most MAX_SUBJECTS_PER_REQUEST. Its ack is applied as it arrives (`onFrame`),
   * before the replayed updates behind it. A server that does not know the message gets subscribes.
   */
  private resumeRecords(epoch: number, subjects: readonly string[]): void {
    for (let i = 0; i < subjects.length; i += MAX_SUBJECTS_PER_REQUEST) {
      const chunk = subjects.slice(i, i + MAX_SUBJECTS_PER_REQUEST);
      const records = this.table.resumeList(chunk);
      if (records.length === 0) continue;
      this.request({ type: 'record.resume', reqId: this.takeReqId(), epoch, records }).catch((e: TidewireError) => {
        if (e.code === 'DISCONNECTED' || e.code === 'CLOSED') return; // the next login resumes again
        if (e.code === 'UNKNOWN_TYPE') {
          for (const subject of this.table.unresumed(chunk)) this.toSubscribe.add(subject);
          this.queueFlush();
          return;
        }
        this.table.fail(chunk, e, e.code !== 'TIMEOUT');
      });
    }
  }

  private onFrame(data: unknown): void {
    this.counters.frames++;
    let messages: ServerMessage[];
    try {
      if (typeof data !== 'string') throw new TidewireError('BAD_FRAME', 'the server sent a binary frame');
      messages = decodeServerFrame(data);
    } catch (e) {
      this.counters.badFrames++;
      this.emitError(new TidewireError('BAD_FRAME', (e as Error).message, { cause: e }));
      return;
    }
    const now = this.clock();
    for (const m of messages) {
      this.counters.messages++;
      switch (m.type) {
        case 'record.update':
          if (this.table.update(m)) this.latencyTracker.receipt(now - m.ts);
          break;
        case 'record.image':
          this.table.image(m);
          break;
        case 'record.status':
          this.table.recordStatus(m);
          break;
        case 'record.resumed':
          // now, not when the request settles: the replayed updates behind it carry only ids
          this.table.resumed(m.records);
          this.settle(m.reqId, m);
          break;
        case 'session.pong':
          if (this.pongWatchdog !== undefined) clearTimeout(this.pongWatchdog);
          this.pongWatchdog = undefined;
          this.counters.rttMs = now - m.ts;
          break;
        case 'admin.metrics':
          this.admin.deliver(m);
          break;
        case 'error':
          if (!this.settle(m.reqId, m) && !this.viewSet.error(m.reqId, TidewireError.fromMessage(m))) this.emitError(TidewireError.fromMessage(m));
          break;
        case 'view.created':
        case 'view.resumed':
        case 'view.rows':
        case 'view.size':
          this.viewSet.deliver(m);
          break;
        case 'view.closed':
          break; // the handle forgot the view when close() was called
        default:
          this.settle(m.reqId, m);
      }
    }
  }

  /** Resolves (or, for `error`, rejects) the request `reqId`; false when none is pending. */
  private settle(reqId: number | undefined, m: ServerMessage): boolean {
    if (reqId === undefined) return false;
    const pending = this.requests.get(reqId);
    if (pending === undefined) return false;
    this.requests.delete(reqId);
    clearTimeout(pending.timer);
    if (m.type === 'error') pending.reject(TidewireError.fromMessage(m));
    else pending.resolve(m);
    return true;
  }

  private setState(state: ConnectionState, detail?: StateDetail): void {
    if (state === this.currentState && detail === undefined) return;
    this.currentState = state;
    for (const cb of [...this.stateListeners]) {
      try {
        cb(state, detail);
      } catch (e) {
        this.emitError(new TidewireError('HANDLER_FAILED', `a state listener threw: ${String(e)}`, { cause: e }));
      }
    }
  }

  private emitError(error: TidewireError): void {
    for (const cb of [...this.errorListeners]) {
      try {
        cb(error);
      } catch {
        // an error listener that throws has nowhere left to report to
      }
    }
  }
}
