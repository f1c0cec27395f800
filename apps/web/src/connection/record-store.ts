/**
 * The web app's view of subscribed records: one client subscription per subject however many
 * components show it, immutable snapshots for React, and change notification batched to one
 * flush per animation frame. Features read snapshots; they never see frames or the client.
 */

import type { Fields } from '@tidewire/protocol';
import { FrameBatcher, type FrameScheduler, defaultFrameScheduler } from './frame-batcher.js';

/**
 * Where a subscribed record stands: `subscribing` until the server acknowledges, `pending` while
 * no source has published it, `live` once an image arrived, `error` when the server refused it.
 */
export type RecordStatus = 'subscribing' | 'pending' | 'live' | 'error';

/** An immutable copy of one record as the UI shows it. A new object on every change. */
export interface RecordSnapshot {
  readonly subject: string;
  readonly status: RecordStatus;
  /** Update sequence of the latest image/update; 0 before the first image. */
  readonly seq: number;
  /** Origin timestamp of the latest update, epoch ms; 0 before the first image. */
  readonly ts: number;
  /** Field values; empty before the first image. */
  readonly fields: Readonly<Fields>;
  /** Why the subscription failed (status `error`). */
  readonly error?: { readonly code: string; readonly message: string };
  /**
   * The record's source is gone or it passed its maximum age (`record.status` stale): its prices
   * are not live and orders on it are rejected. False until the server says otherwise.
   */
  readonly stale: boolean;
}

/** What the store needs from a record as the client SDK delivers it. */
export interface SourceRecord {
  subject: string;
  seq: number;
  ts: number;
  fields: Fields;
  /** `record.status`; absent: ok. */
  status?: 'ok' | 'stale';
}

/** The subset of the client SDK's record handler the store implements. */
export interface SourceRecordHandler {
  onImage?(record: SourceRecord): void;
  onUpdate?(record: SourceRecord, ...rest: never[]): void;
  onStatus?(subject: string, status: 'pending' | 'subscribed' | 'error', error?: { code: string; message: string }): void;
  onRecordStatus?(record: SourceRecord, status: 'ok' | 'stale'): void;
}

/** The subset of `TidewireClient` the store uses (kept structural so the store is unit-testable). */
export interface RecordSource {
  subscribe(subjects: string | string[], handler: SourceRecordHandler): { unsubscribe(): void };
}

/** Called once per frame with the snapshots (of the watched subjects) that changed in it. */
export type RecordListener = (changed: readonly RecordSnapshot[]) => void;

interface Entry {
  snapshot: RecordSnapshot;
  listeners: Set<RecordListener>;
  subscription: { unsubscribe(): void } | undefined;
}

/** Copies a delivered record into an immutable snapshot with the given status. */
function snapshotOf(record: SourceRecord, status: RecordStatus): RecordSnapshot {
  return Object.freeze({
    subject: record.subject,
    status,
    seq: record.seq,
    ts: record.ts,
    // Copy: the SDK merges deltas into its own record object in place.
    fields: Object.freeze({ ...record.fields }),
    stale: record.status === 'stale',
  });
}

/**
 * Ref-counted, frame-batched record subscriptions over a `RecordSource` (the client SDK).
 * A subject stays subscribed while at least one listener watches it.
 */
export class RecordStore {
  private readonly entries = new Map<string, Entry>();
  private readonly batcher: FrameBatcher<string>;
  private disposed = false;

  /**
   * @param source the client SDK (or anything with its `subscribe`)
   * @param scheduler when change notifications are flushed; default requestAnimationFrame
   */
  constructor(
    private readonly source: RecordSource,
    scheduler: FrameScheduler = defaultFrameScheduler(),
  ) {
    this.batcher = new FrameBatcher((subjects) => this.notify(subjects), scheduler);
  }

  /** The latest snapshot of a watched subject; undefined when nobody watches it. */
  get(subject: string): RecordSnapshot | undefined {
    return this.entries.get(subject)?.snapshot;
  }

  /** Subjects currently subscribed through this store. */
  subjects(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Watches `subjects` (duplicates ignored): subscribes the ones nobody watched yet, and calls
   * `listener` once per frame with those that changed. Subjects already known are delivered in
   * the next flush too, so a late watcher gets their current state. Returns the unwatch function
   * (idempotent); the last unwatch of a subject unsubscribes it. Invalid subjects are the server's
   * to reject: they end in status `error` with its message.
   */
  watch(subjects: readonly string[], listener: RecordListener): () => void {
    if (this.disposed) return () => {};
    const unique = [...new Set(subjects)];
    for (const subject of unique) {
      let entry = this.entries.get(subject);
      if (entry === undefined) {
        entry = {
          snapshot: Object.freeze({ subject, status: 'subscribing', seq: 0, ts: 0, fields: Object.freeze({}), stale: false }),
          listeners: new Set(),
          subscription: undefined,
        };
        this.entries.set(subject, entry);
        entry.subscription = this.source.subscribe(subject, this.handlerFor(subject));
      }
      entry.listeners.add(listener);
      this.batcher.mark(subject);
    }
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      for (const subject of unique) this.release(subject, listener);
    };
  }

  /** Unsubscribes everything and stops notifying. Later watch() calls do nothing. */
  dispose(): void {
    this.disposed = true;
    this.batcher.dispose();
    for (const entry of this.entries.values()) entry.subscription?.unsubscribe();
    this.entries.clear();
  }

  private release(subject: string, listener: RecordListener): void {
    const entry = this.entries.get(subject);
    if (entry === undefined) return;
    entry.listeners.delete(listener);
    if (entry.listeners.size > 0) return;
    this.entries.delete(subject);
    entry.subscription?.unsubscribe();
  }

  private handlerFor(subject: string): SourceRecordHandler {
    return {
      onImage: (record) => this.replace(subject, snapshotOf(record, 'live')),
      onUpdate: (record) => this.replace(subject, snapshotOf(record, 'live')),
      onRecordStatus: (record) => this.replace(subject, snapshotOf(record, 'live')),
      onStatus: (_subject, status, error) => {
        const current = this.entries.get(subject)?.snapshot;
        if (current === undefined) return;
        if (status === 'error') {
          const detail = { code: error?.code ?? 'INTERNAL', message: error?.message ?? 'subscription failed' };
          this.replace(subject, Object.freeze({ ...current, status: 'error', error: Object.freeze(detail) }));
        } else if (status === 'pending') {
          this.replace(subject, Object.freeze({ ...current, status: 'pending' }));
        } else if (current.status === 'subscribing' || current.status === 'error') {
          // 'subscribed': live once its image arrives; until then keep showing "subscribing".
          this.replace(subject, Object.freeze({ ...current, status: current.seq > 0 ? 'live' : 'subscribing' }));
        }
      },
    };
  }

  private replace(subject: string, snapshot: RecordSnapshot): void {
    const entry = this.entries.get(subject);
    // A late delivery for a subject unwatched in the meantime: nobody to show it to.
    if (entry === undefined) return;
    entry.snapshot = snapshot;
    this.batcher.mark(subject);
  }

  private notify(subjects: ReadonlySet<string>): void {
    // Group by listener so each gets one call per frame, however many of its subjects changed.
    const byListener = new Map<RecordListener, RecordSnapshot[]>();
    for (const subject of subjects) {
      const entry = this.entries.get(subject);
      if (entry === undefined) continue;
      for (const listener of entry.listeners) {
        const list = byListener.get(listener);
        if (list === undefined) byListener.set(listener, [entry.snapshot]);
        else list.push(entry.snapshot);
      }
    }
    for (const [listener, changed] of byListener) {
      try {
        listener(changed);
      } catch (error) {
        // One broken view must not starve the others of this frame: rethrow outside the loop.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
