/**
 * The live admin metrics stream (`admin.subscribe` -> `admin.metrics` once per server interval),
 * shared by every handler of one client: subscribed while at least one handler listens, and again
 * after every (re)login. Admin role only: the server answers NOT_ENTITLED to others.
 */

import type { AdminMetrics, ServerMessage } from '@tidewire/protocol';
import type { TidewireError } from './errors.js';

/** Callbacks of `client.adminMetrics()`. */
export interface AdminMetricsHandler {
  /** One interval's metrics and sessions (about once a second). */
  onMetrics(metrics: AdminMetrics): void;
  /** The server refused the stream (NOT_ENTITLED for non-admins) or the request failed. */
  onError?(error: TidewireError): void;
}

/** A handle on `adminMetrics()`; `stop()` is idempotent. */
export interface AdminMetricsStream {
  stop(): void;
}

/** What the stream needs from its client. */
export interface AdminStreamPort {
  /** True while logged in (requests can be sent). */
  loggedIn(): boolean;
  /** Sends `admin.subscribe` / `admin.unsubscribe` and resolves with the reply. */
  request(type: 'admin.subscribe' | 'admin.unsubscribe'): Promise<ServerMessage>;
  /** Reports a failure nobody else will see (a handler that threw). */
  report(error: unknown): void;
}

/** Errors that a new login resolves by itself (everything is resubscribed then). */
const TRANSIENT = new Set(['DISCONNECTED', 'CLOSED']);

export class AdminStream {
  private readonly handlers = new Set<AdminMetricsHandler>();

  constructor(private readonly port: AdminStreamPort) {}

  /** Adds a handler; the first one subscribes (now, or at the next login). */
  add(handler: AdminMetricsHandler): AdminMetricsStream {
    this.handlers.add(handler);
    if (this.handlers.size === 1 && this.port.loggedIn()) this.subscribe();
    return {
      stop: () => {
        if (!this.handlers.delete(handler) || this.handlers.size > 0 || !this.port.loggedIn()) return;
        this.port.request('admin.unsubscribe').catch(() => {
          // nothing to do: the server drops the stream with the session anyway
        });
      },
    };
  }

  /** After every login: the server forgot the stream with the old session. */
  onLoggedIn(): void {
    if (this.handlers.size > 0) this.subscribe();
  }

  /** Hands one `admin.metrics` to every handler. */
  deliver(metrics: AdminMetrics): void {
    for (const h of [...this.handlers]) {
      try {
        h.onMetrics(metrics);
      } catch (e) {
        this.port.report(e);
      }
    }
  }

  private subscribe(): void {
    this.port.request('admin.subscribe').catch((error: TidewireError) => {
      if (TRANSIENT.has(error.code)) return;
      for (const h of [...this.handlers]) h.onError?.(error);
    });
  }
}
