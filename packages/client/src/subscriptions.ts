/**
 * The client's record subscriptions: one entry per subject shared by every subscription to it
 * (ref-counted listeners), the merged record, and dispatch of images, updates and status to the
 * handlers. Knows nothing about sockets: the client feeds it messages and asks what to (un)subscribe.
 */

import type { RecordImage, RecordStatus, RecordUpdate, ResumeRecord, SubscribedRecord } from '@tidewire/protocol';
import { TidewireError } from './errors.js';
import type { ClientRecord, ClientStats, RecordHandler, SubscriptionStatus } from './types.js';

/** One `subscribe()` call's handler; `active` turns false on unsubscribe. */
export interface Listener {
  readonly handler: RecordHandler;
  active: boolean;
}

interface Entry {
  readonly subject: string;
  /** Server id, known from the ack; undefined until then and after a disconnect. */
  id: number | undefined;
  /** `requested`: sent (or to be sent), no ack yet. */
  status: 'requested' | SubscriptionStatus;
  error: TidewireError | undefined;
  record: ClientRecord | undefined;
  readonly listeners: Set<Listener>;
  /** Sent in a `record.resume`, not acknowledged yet. */
  resuming: boolean;
  /** The resume found no record to continue (pending after a restart): its next image is a reset. */
  resetNext: boolean;
}

/** Counters the table updates (a view of the client's stats). */
type TableCounters = Pick<ClientStats, 'images' | 'updates' | 'gaps' | 'outOfOrder' | 'orphans' | 'resumed' | 'resets'>;

/** Subjects -> entries, ids -> entries, and handler dispatch. */
export class SubscriptionTable {
  private readonly bySubject = new Map<string, Entry>();
  private readonly byId = new Map<number, Entry>();

  /**
   * @param counters updated in place.
   * @param report receives HANDLER_FAILED when a handler throws (the table carries on).
   */
  constructor(
    private readonly counters: TableCounters,
    private readonly report: (error: TidewireError) => void,
  ) {}

  /** Number of subjects with at least one listener. */
  get size(): number {
    return this.bySubject.size;
  }

  /** Every subscribed subject (for resubscribing after a reconnect). */
  subjects(): string[] {
    return [...this.bySubject.keys()];
  }

  /**
   * Adds `listener` to each subject. Returns the subjects that had no entry yet (the server must
   * be asked for them). A listener joining a known record gets its status and image in a microtask.
   */
  add(subjects: readonly string[], listener: Listener): string[] {
    const fresh: string[] = [];
    for (const subject of subjects) {
      let entry = this.bySubject.get(subject);
      if (entry === undefined) {
        entry = { subject, id: undefined, status: 'requested', error: undefined, record: undefined, listeners: new Set(), resuming: false, resetNext: false };
        this.bySubject.set(subject, entry);
        fresh.push(subject);
      } else if (entry.status !== 'requested') {
        const known = entry;
        queueMicrotask(() => this.catchUp(known, listener));
      }
      entry.listeners.add(listener);
    }
    return fresh;
  }

  /** Removes `listener` from each subject; returns the subjects whose last listener went. */
  remove(subjects: readonly string[], listener: Listener): string[] {
    const gone: string[] = [];
    for (const subject of subjects) {
      const entry = this.bySubject.get(subject);
      if (entry === undefined || !entry.listeners.delete(listener)) continue;
      if (entry.listeners.size > 0) continue;
      this.bySubject.delete(subject);
      if (entry.id !== undefined && this.byId.get(entry.id) === entry) this.byId.delete(entry.id);
      gone.push(subject);
    }
    return gone;
  }

  /**
   * The connection dropped: ids stop routing messages; listeners stay. With `keep` (the server
   * can resume) records, ids and statuses are kept for `resumeList`; else they are forgotten and
   * every subject is subscribed afresh.
   */
  reset(keep = false): void {
    this.byId.clear();
    for (const entry of this.bySubject.values()) {
      entry.resuming = false;
      if (keep) continue;
      entry.id = undefined;
      entry.status = 'requested';
      entry.error = undefined;
      entry.record = undefined;
      entry.resetNext = false;
    }
  }

  /** What a `record.resume` names for `subjects`: the id and seq held (0: none); marks them resuming. */
  resumeList(subjects: readonly string[]): ResumeRecord[] {
    const out: ResumeRecord[] = [];
    for (const subject of subjects) {
      const entry = this.bySubject.get(subject);
      if (entry === undefined) continue;
      entry.resuming = true;
      out.push({ subject, id: entry.id ?? 0, seq: entry.record?.seq ?? 0 });
    }
    return out;
  }

  /**
   * Applies a `record.resumed` ack: as `acknowledge`; each record held before is counted resumed
   * (its missed updates, or its reset image, follow); one that is pending now (the server lost it:
   * a restart) gets its next image as a reset.
   */
  resumed(records: readonly SubscribedRecord[]): void {
    for (const r of records) {
      const entry = this.bySubject.get(r.subject);
      if (entry === undefined || !entry.resuming) continue;
      entry.resuming = false;
      if (entry.record === undefined) continue;
      this.counters.resumed++;
      if (r.pending) entry.resetNext = true;
    }
    this.acknowledge(records);
  }

  /** Subjects of `subjects` sent in a resume and not acknowledged (to subscribe afresh instead). */
  unresumed(subjects: readonly string[]): string[] {
    const out: string[] = [];
    for (const subject of subjects) {
      const entry = this.bySubject.get(subject);
      if (entry === undefined || !entry.resuming) continue;
      entry.resuming = false;
      entry.record = undefined;
      entry.resetNext = false;
      out.push(subject);
    }
    return out;
  }

  /** Applies a `record.subscribed` ack: ids, and `pending` or `subscribed` status. */
  acknowledge(records: readonly SubscribedRecord[]): void {
    for (const r of records) {
      const entry = this.bySubject.get(r.subject);
      if (entry === undefined) continue; // unsubscribed meanwhile; the server gets that request next
      if (entry.id !== undefined && entry.id !== r.id && this.byId.get(entry.id) === entry) this.byId.delete(entry.id);
      entry.id = r.id;
      this.byId.set(r.id, entry);
      const status = r.pending ? 'pending' : 'subscribed';
      if (entry.status === status) continue;
      entry.status = status;
      entry.error = undefined;
      this.status(entry, status);
    }
  }

  /** Marks still-unacknowledged subjects (or all of `subjects` when `force`) as failed with `error`. */
  fail(subjects: readonly string[], error: TidewireError, force = true): void {
    for (const subject of subjects) {
      const entry = this.bySubject.get(subject);
      if (entry === undefined || (!force && entry.status !== 'requested')) continue;
      entry.status = 'error';
      entry.error = error;
      this.status(entry, 'error', error);
    }
  }

  /** Reports `error` for a subject that never got an entry (e.g. an invalid subject). */
  rejectFor(subject: string, listener: Listener, error: TidewireError): void {
    queueMicrotask(() => {
      if (listener.active) this.call(() => listener.handler.onStatus?.(subject, 'error', error));
    });
  }

  /** Applies an image: the record is replaced and every listener gets it. */
  image(m: RecordImage): void {
    const entry = this.byId.get(m.id) ?? this.bySubject.get(m.subject);
    if (entry === undefined) return; // unsubscribed meanwhile
    if (entry.id !== m.id) {
      entry.id = m.id;
      this.byId.set(m.id, entry);
    }
    this.counters.images++;
    const reset = m.reset === true || entry.resetNext;
    entry.resetNext = false;
    if (reset) this.counters.resets++;
    // an image of a stale record is followed by its record.status
    entry.record = { subject: entry.subject, id: m.id, seq: m.seq, ts: m.ts, fields: { ...m.fields }, types: { ...m.types }, status: 'ok' };
    if (entry.status !== 'subscribed') {
      entry.status = 'subscribed'; // a pending record appeared
      entry.error = undefined;
      this.status(entry, 'subscribed');
    }
    const record = entry.record;
    for (const l of entry.listeners) {
      if (l.handler.onImage !== undefined) this.call(() => l.handler.onImage?.(record, reset));
    }
  }

  /**
   * Merges an update into its record and dispatches it. Returns false when it was not applied:
   * no such subscription, no image yet (orphan), or a stale seq (out of order).
   */
  update(m: RecordUpdate): boolean {
    const entry = this.byId.get(m.id);
    if (entry === undefined) return false;
    const record = entry.record;
    if (record === undefined) {
      this.counters.orphans++;
      return false;
    }
    if (m.seq <= record.seq) {
      this.counters.outOfOrder++;
      return false;
    }
    // conflated updates skip seqs on purpose; anything else that skips lost messages
    if (m.seq !== record.seq + 1 && m.conflated !== true) this.counters.gaps++;
    this.counters.updates++;
    record.seq = m.seq;
    record.ts = m.ts;
    const fields = record.fields;
    for (const name in m.fields) {
      const value = m.fields[name];
      if (value === null) delete fields[name];
      else if (value !== undefined) fields[name] = value;
    }
    if (m.types !== undefined) Object.assign(record.types, m.types);
    for (const l of entry.listeners) {
      if (l.handler.onUpdate !== undefined) this.call(() => l.handler.onUpdate?.(record, m.fields, m));
    }
    return true;
  }

  /** Applies a `record.status`: the record's status changes and every listener hears of it. */
  recordStatus(m: RecordStatus): void {
    const record = this.byId.get(m.id)?.record;
    if (record === undefined || record.status === m.status) return;
    record.status = m.status;
    for (const l of this.byId.get(m.id)!.listeners) {
      if (l.handler.onRecordStatus !== undefined) this.call(() => l.handler.onRecordStatus?.(record, m.status));
    }
  }

  private catchUp(entry: Entry, listener: Listener): void {
    if (!listener.active || this.bySubject.get(entry.subject) !== entry || entry.status === 'requested') return;
    const { handler } = listener;
    this.call(() => handler.onStatus?.(entry.subject, entry.status as SubscriptionStatus, entry.error));
    if (entry.record !== undefined && listener.active) {
      const record = entry.record;
      this.call(() => handler.onImage?.(record));
    }
  }

  private status(entry: Entry, status: SubscriptionStatus, error?: TidewireError): void {
    for (const l of entry.listeners) {
      if (l.handler.onStatus !== undefined) this.call(() => l.handler.onStatus?.(entry.subject, status, error));
    }
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.report(new TidewireError('HANDLER_FAILED', `a record handler threw: ${String(e)}`, { cause: e }));
    }
  }
}
