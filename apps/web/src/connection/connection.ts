/**
 * The web app's one connection to the server: owns the `TidewireClient`, login/logout, the
 * stored session token, connection state and the record store. React reads it through
 * ConnectionProvider and the hooks in hooks.ts; features never touch the client directly.
 */

import {
  TidewireClient,
  type AdminMetricsHandler,
  type AdminMetricsStream,
  type ClientOptions,
  type ConnectionState,
  type LatencySnapshot,
  type OrderAck,
  type OrderAmendment,
  type OrderRequest,
  type SessionInfo,
  type StatementInfo,
  TidewireError,
  type ViewHandle,
  type ViewHandler,
  type ViewRequest,
} from '@tidewire/client';
import type { FrameScheduler } from './frame-batcher.js';
import { RecordStore } from './record-store.js';
import { clearStoredSession, readStoredSession, writeStoredSession, type StorageLike } from './session-token.js';
import { SubmitRejects } from './submit-rejects.js';
import { UserPrefs } from './user-prefs.js';

/** Where the user is in the login flow. */
export type LoginPhase = 'loggedOut' | 'loggingIn' | 'loggedIn';

/** An error the user should read: the server's code and message (e.g. BAD_CREDENTIALS). */
export interface ConnectionError {
  readonly code: string;
  readonly message: string;
  /** `message` is a plain sentence of ours for the user, shown without the code. */
  readonly plain?: boolean;
}

/**
 * What the login page says when the server refused the token kept for this tab (it expired, the
 * server restarted with another secret, the password changed): the server's message names the
 * mechanism, which is not the user's concern.
 */
export const SESSION_EXPIRED: ConnectionError = Object.freeze({ code: 'BAD_TOKEN', message: 'Your session has expired, please log in again.', plain: true });

/** Everything the shell shows about the connection. Immutable: a new object on every change. */
export interface ConnectionSnapshot {
  readonly phase: LoginPhase;
  /** The client's state; `idle` while there is no client (logged out). */
  readonly state: ConnectionState | 'idle';
  /** The logged-in session (user, role, tier); undefined while logged out. */
  readonly session: SessionInfo | undefined;
  /** Why the last login failed; cleared by the next attempt. */
  readonly loginError: ConnectionError | undefined;
  /** Close code and reason of the latest close/reconnect, when the server gave one. */
  readonly closeDetail: { readonly code?: number; readonly reason?: string } | undefined;
}

/** Options of a Connection; everything but `urls` exists for tests and non-browser hosts. */
export interface ConnectionOptions {
  /**
   * `ws(s)://host/stream` of every server the tab may use, first tried first (see streamUrls()):
   * the SDK moves to the next when its connection dies, logging in again with the token.
   */
  urls: readonly string[];
  /** Keeps the token across reloads; default: none (every reload asks for a password). */
  storage?: StorageLike;
  /** Keeps a copy of the user's preferences (localStorage in the browser); default: none. */
  prefsStorage?: StorageLike;
  /** Builds the SDK client; default `new TidewireClient(options)` with the global WebSocket. */
  createClient?: (options: ClientOptions) => TidewireClient;
  /** Frame scheduler for record notifications; default requestAnimationFrame. */
  scheduler?: FrameScheduler;
  /** Epoch ms, for token expiry checks; default Date.now. */
  now?: () => number;
  /**
   * How long a dropped connection stays out of the snapshot, ms: a blip the SDK recovers from
   * within it (it resumes records and views, replaying what was missed) shows nothing; a longer
   * outage shows `reconnecting`. 0: shown at once. @default 2000
   */
  blipGraceMs?: number;
  /** Starts a timer, returns its cancel; default setTimeout. */
  setTimer?: (fn: () => void, ms: number) => () => void;
}

/** `ConnectionOptions.blipGraceMs` default. */
export const BLIP_GRACE_MS = 2000;

/** Most paint reports queued for one frame. */
const MAX_PENDING_PAINTS = 1000;

const LOGGED_OUT: ConnectionSnapshot = Object.freeze({
  phase: 'loggedOut',
  state: 'idle',
  session: undefined,
  loginError: undefined,
  closeDetail: undefined,
});

/** Turns whatever a failed connect() rejected with into a code + message for the login page. */
export function toConnectionError(error: unknown): ConnectionError {
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && typeof message === 'string') return { code, message };
    if (typeof message === 'string') return { code: 'UNAVAILABLE', message };
  }
  return { code: 'UNAVAILABLE', message: String(error) };
}

/** One user's connection: at most one client at a time, replaced on every login. */
export class Connection {
  private snapshot: ConnectionSnapshot = LOGGED_OUT;
  private readonly listeners = new Set<() => void>();
  private client: TidewireClient | undefined;
  private store: RecordStore | undefined;
  private userPrefs: UserPrefs | undefined;
  private rejects: SubmitRejects | undefined;
  private offState: (() => void) | undefined;
  private pendingPaints: number[] = [];
  private paintTimer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by every login/logout so a slow, superseded connect() cannot take over. */
  private generation = 0;
  private readonly now: () => number;
  private readonly createClient: (options: ClientOptions) => TidewireClient;
  private readonly setTimer: (fn: () => void, ms: number) => () => void;
  /** A drop inside the blip grace: its detail, and the timer that shows it when the grace ends. */
  private blip: { detail: ConnectionSnapshot['closeDetail']; cancel: () => void } | undefined;

  constructor(private readonly options: ConnectionOptions) {
    this.now = options.now ?? Date.now;
    this.setTimer =
      options.setTimer ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        return () => clearTimeout(t);
      });
    this.createClient = options.createClient ?? ((clientOptions) => new TidewireClient(clientOptions));
  }

  /** Current snapshot (for useSyncExternalStore). */
  readonly getSnapshot = (): ConnectionSnapshot => this.snapshot;

  /** Calls `listener` after every snapshot change; returns the unsubscribe function. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Record subscriptions of the logged-in session; undefined while logged out. */
  get records(): RecordStore | undefined {
    return this.store;
  }

  /** Orders of the logged-in user refused at submit in this tab (the blotter shows them); undefined while logged out. */
  get submitRejects(): SubmitRejects | undefined {
    return this.rejects;
  }

  /** The logged-in user's preferences (layout, watchlist), kept on the server; undefined while logged out. */
  get prefs(): UserPrefs | undefined {
    return this.userPrefs;
  }

  /**
   * The live admin metrics stream of the logged-in session (admin role; others get onError with
   * NOT_ENTITLED), kept across reconnects; undefined while logged out.
   */
  adminMetrics(handler: AdminMetricsHandler): AdminMetricsStream | undefined {
    return this.client?.adminMetrics(handler);
  }

  /**
   * Opens a server-side view (container + filter + sort + window) of the logged-in session:
   * `move()` scrolls it, `close()` ends it; re-created by the client after every reconnect.
   * Undefined while logged out. A refused request (bad filter: message names the position)
   * reaches `handler.onError`.
   */
  view(request: ViewRequest, handler: ViewHandler): ViewHandle | undefined {
    return this.client?.view(request, handler);
  }

  /**
   * Submits an order for the logged-in session (client SDK `submitOrder`): resolves with the
   * durable `order.ack`, rejects with `OrderRejectedError` (field, rule) or a coded error; a
   * refusal is also kept in `submitRejects`. Logged out: rejects at once with DISCONNECTED
   * (orders are never queued).
   */
  submitOrder(order: OrderRequest): Promise<OrderAck> {
    const client = this.client;
    if (client === undefined) return Promise.reject(new TidewireError('DISCONNECTED', 'not logged in: the order was not sent'));
    const rejects = this.rejects;
    return client.submitOrder(order).catch((error: unknown) => {
      // a refused order never reaches the server's blotter: keep it for the blotter to show
      rejects?.add(order, error);
      throw error;
    });
  }

  /** Cancels an open order by its clientOrderId (client SDK `cancelOrder`); rejects like submitOrder. */
  cancelOrder(clientOrderId: string): Promise<OrderAck> {
    return this.client?.cancelOrder(clientOrderId) ?? Promise.reject(new TidewireError('DISCONNECTED', 'not logged in: the cancel was not sent'));
  }

  /**
   * Changes an open order's total quantity and/or limit price by its clientOrderId (client SDK
   * `amendOrder`; at least one of them, else BAD_REQUEST before sending); rejects like submitOrder.
   */
  amendOrder(clientOrderId: string, change: OrderAmendment): Promise<OrderAck> {
    return this.client?.amendOrder(clientOrderId, change) ?? Promise.reject(new TidewireError('DISCONNECTED', 'not logged in: the amend was not sent'));
  }

  /**
   * Starts a statement (client SDK `createStatement`): resolves with its name, canonical text and
   * result container; rejects with the server's refusal (a parse error: field `statement`, its
   * column in the message) or DISCONNECTED when logged out.
   */
  createStatement(name: string, statement: string): Promise<StatementInfo> {
    return this.client?.createStatement(name, statement) ?? Promise.reject(new TidewireError('DISCONNECTED', 'not logged in: the statement was not sent'));
  }

  /** Releases a statement this client created (client SDK `closeStatement`). */
  closeStatement(name: string): Promise<void> {
    return this.client?.closeStatement(name) ?? Promise.reject(new TidewireError('DISCONNECTED', 'not logged in: the close was not sent'));
  }

  /** Origin -> receipt latency measured by the client; undefined while logged out. */
  latency(): LatencySnapshot | undefined {
    return this.client?.latency();
  }

  /**
   * Reports that an update with origin timestamp `originTs` (epoch ms) was rendered in the
   * current frame. The client is told in a task queued now, which the browser runs after it has
   * painted the frame, so the figure is origin -> on screen. At most MAX_PENDING_PAINTS reports
   * wait per frame; beyond that they are dropped (the mean does not need them all).
   */
  notePainted(originTs: number): void {
    if (this.client === undefined || this.pendingPaints.length >= MAX_PENDING_PAINTS) return;
    this.pendingPaints.push(originTs);
    if (this.paintTimer === undefined) {
      this.paintTimer = setTimeout(() => {
        this.paintTimer = undefined;
        const pending = this.pendingPaints;
        this.pendingPaints = [];
        for (const ts of pending) this.client?.notePaint(ts);
      }, 0);
    }
  }

  /**
   * Logs in with a password. Resolves when logged in; on failure the snapshot carries
   * `loginError` (the server's code and message) and the promise still resolves (the login page
   * renders the error). A login while another is in flight supersedes it.
   */
  async login(user: string, password: string): Promise<void> {
    await this.start({ user, password });
  }

  /**
   * Logs in again with the token kept from an earlier login in this tab (page reload). Does
   * nothing when no unexpired token is stored; a refused token is forgotten and the login page
   * shows SESSION_EXPIRED (other failures, e.g. the server unreachable, with their own message).
   */
  async resume(): Promise<void> {
    const stored = readStoredSession(this.options.storage, this.now());
    if (stored === undefined) return;
    await this.start({ token: stored.token });
  }

  /** Closes the connection, forgets the token and returns to the login page. Idempotent. */
  logout(): void {
    this.generation++;
    clearStoredSession(this.options.storage);
    this.teardown();
    this.set(LOGGED_OUT);
  }

  private async start(auth: { user: string; password: string } | { token: string }): Promise<void> {
    const generation = ++this.generation;
    this.teardown();
    let client: TidewireClient;
    try {
      client = this.createClient({ urls: this.options.urls, ...('token' in auth ? {} : { credentials: auth }) });
    } catch (error) {
      this.set({ ...LOGGED_OUT, loginError: toConnectionError(error) });
      return;
    }
    this.client = client;
    this.set({ ...LOGGED_OUT, phase: 'loggingIn', state: client.state });
    this.offState = client.on('state', (state, detail) => {
      if (this.client !== client) return;
      const closeDetail = detail?.code !== undefined || detail?.reason !== undefined ? detail : (this.blip?.detail ?? this.snapshot.closeDetail);
      const grace = this.options.blipGraceMs ?? BLIP_GRACE_MS;
      const held = state !== 'loggedIn' && state !== 'closed' && this.blip !== undefined;
      if (held || (state === 'reconnecting' && grace > 0 && this.snapshot.state === 'loggedIn')) {
        // a blip: the SDK keeps and resumes what is on screen, so nothing changes unless it lasts
        if (this.blip === undefined) {
          const cancel = this.setTimer(() => {
            const detail = this.blip?.detail;
            this.blip = undefined;
            // still without a session (reconnecting, or connected with its login unanswered): show it
            const away = client.state !== 'loggedIn' && client.state !== 'closed';
            if (this.client === client && away) this.set({ ...this.snapshot, state: 'reconnecting', closeDetail: detail });
          }, grace);
          this.blip = { detail: closeDetail, cancel };
        } else this.blip.detail = closeDetail;
        return;
      }
      const recovered = this.endBlip() && state === 'loggedIn' && this.snapshot.state === 'loggedIn';
      if (!recovered) this.set({ ...this.snapshot, state, closeDetail });
      // changes made while disconnected reach the server once the session is back
      if (state === 'loggedIn') this.userPrefs?.flush();
    });
    try {
      const session = await ('token' in auth ? client.resume(auth.token) : client.connect());
      if (generation !== this.generation) return; // superseded by a newer login or a logout
      writeStoredSession(this.options.storage, { user: session.user, token: session.token, expiresAt: session.tokenExpiresAt });
      this.store = new RecordStore(client, this.options.scheduler);
      this.rejects = new SubmitRejects(this.options.storage, session.user);
      this.userPrefs = new UserPrefs({ getPrefs: () => client.getPrefs(), setPrefs: (patch) => client.setPrefs(patch) }, this.options.prefsStorage, session.user);
      void this.userPrefs.load();
      this.set({ phase: 'loggedIn', state: client.state, session, loginError: undefined, closeDetail: undefined });
    } catch (error) {
      if (generation !== this.generation) return;
      this.teardown();
      if ('token' in auth) clearStoredSession(this.options.storage);
      const loginError = toConnectionError(error);
      this.set({ ...LOGGED_OUT, loginError: 'token' in auth && loginError.code === 'BAD_TOKEN' ? SESSION_EXPIRED : loginError });
    }
  }

  /** Cancels a blip's timer; true when one was pending. */
  private endBlip(): boolean {
    const blip = this.blip;
    this.blip = undefined;
    blip?.cancel();
    return blip !== undefined;
  }

  private teardown(): void {
    this.endBlip();
    this.offState?.();
    this.offState = undefined;
    this.store?.dispose();
    this.store = undefined;
    this.userPrefs?.dispose();
    this.userPrefs = undefined;
    this.rejects = undefined;
    this.client?.close();
    this.client = undefined;
  }

  private set(next: ConnectionSnapshot): void {
    this.snapshot = Object.freeze(next);
    for (const listener of this.listeners) listener();
  }
}
