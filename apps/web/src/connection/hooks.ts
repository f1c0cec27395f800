/**
 * React hooks over the app's Connection: connection state, session, latency and records.
 * Components re-render only for the records they watch, at most once per animation frame.
 */

import type { LatencySnapshot } from '@tidewire/client';
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import type { ConnectionSnapshot } from './connection.js';
import { useConnection } from './ConnectionProvider.js';
import type { RecordListener, RecordSnapshot, RecordStore } from './record-store.js';
import type { SubmitReject } from './submit-rejects.js';
import type { PrefsSnapshot } from './user-prefs.js';

/** The connection snapshot (phase, state, session, errors); re-renders on every change. */
export function useConnectionSnapshot(): ConnectionSnapshot {
  const connection = useConnection();
  return useSyncExternalStore(connection.subscribe, connection.getSnapshot);
}

/**
 * The client's latency snapshot, polled every `intervalMs` (default 1000 ms, minimum 100 ms);
 * undefined while logged out.
 */
export function useLatency(intervalMs = 1000): LatencySnapshot | undefined {
  const connection = useConnection();
  const [latency, setLatency] = useState<LatencySnapshot | undefined>(() => connection.latency());
  useEffect(() => {
    const period = Math.max(100, intervalMs);
    setLatency(connection.latency());
    const timer = setInterval(() => setLatency(connection.latency()), period);
    return () => clearInterval(timer);
  }, [connection, intervalMs]);
  return latency;
}

/**
 * Calls `onChanged` once per frame with the snapshots of `subjects` that changed (and, right
 * after a subject is added, its current state). For consumers that update imperatively (the
 * grid): no React state involved. Changing the list only subscribes the added subjects and
 * unsubscribes the removed ones. `onChanged` may change between renders without resubscribing.
 */
export function useRecordStream(subjects: readonly string[], onChanged: RecordListener): void {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const callback = useRef(onChanged);
  callback.current = onChanged;
  const watched = useRef<{ store: RecordStore; unwatch: Map<string, () => void>; listener: RecordListener }>(undefined);
  const key = subjects.join('\n');

  useEffect(() => {
    const store = connection.records;
    if (store === undefined) return undefined;
    const state = { store, unwatch: new Map<string, () => void>(), listener: (changed: readonly RecordSnapshot[]) => callback.current(changed) };
    watched.current = state;
    return () => {
      for (const unwatch of state.unwatch.values()) unwatch();
      if (watched.current === state) watched.current = undefined;
    };
    // `session`: a new login brings a new store.
  }, [connection, session]);

  useEffect(() => {
    const state = watched.current;
    if (state === undefined) return;
    const wanted = new Set(key === '' ? [] : key.split('\n'));
    for (const [subject, unwatch] of state.unwatch) {
      if (wanted.has(subject)) continue;
      unwatch();
      state.unwatch.delete(subject);
    }
    for (const subject of wanted) {
      if (!state.unwatch.has(subject)) state.unwatch.set(subject, state.store.watch([subject], state.listener));
    }
  }, [connection, session, key]);
}

/** The latest snapshot of each subject, in order; entries are undefined until watched. Re-renders once per frame at most. */
export function useRecords(subjects: readonly string[]): ReadonlyArray<RecordSnapshot | undefined> {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const key = subjects.join('\n');
  const cache = useRef<ReadonlyArray<RecordSnapshot | undefined>>([]);

  const subscribe = useCallback(
    (notify: () => void) => {
      const store = connection.records;
      if (store === undefined || key === '') return () => {};
      return store.watch(key.split('\n'), () => notify());
    },
    // `session`: a new login brings a new store.
    [connection, session, key],
  );
  const getSnapshot = useCallback(() => {
    const store = connection.records;
    const list = key === '' ? [] : key.split('\n');
    const current = list.map((subject) => store?.get(subject));
    const cached = cache.current;
    // Reuse the previous array when nothing changed: useSyncExternalStore needs a stable result.
    if (cached.length === current.length && current.every((snapshot, i) => snapshot === cached[i])) return cached;
    cache.current = current;
    return current;
  }, [connection, session, key]);
  return useSyncExternalStore(subscribe, getSnapshot);
}

/** The latest snapshot of one subject (undefined for an empty subject). Re-renders once per frame at most. */
export function useRecord(subject: string): RecordSnapshot | undefined {
  const subjects = useMemo(() => (subject === '' ? [] : [subject]), [subject]);
  return useRecords(subjects)[0];
}

const NO_PREFS: PrefsSnapshot = Object.freeze({ status: 'loading', values: Object.freeze({}), error: undefined });

/** The logged-in user's preferences (status, values); `loading` while logged out or not yet read. */
export function usePrefs(): PrefsSnapshot {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const subscribe = useCallback(
    (notify: () => void) => connection.prefs?.subscribe(notify) ?? (() => {}),
    // `session`: a new login brings new preferences.
    [connection, session],
  );
  const getSnapshot = useCallback(() => connection.prefs?.getSnapshot() ?? NO_PREFS, [connection, session]);
  return useSyncExternalStore(subscribe, getSnapshot);
}

/** Sets (null: deletes) one preference of the logged-in user; nothing while logged out. */
export function usePutPref(): (key: string, value: string | null) => void {
  const connection = useConnection();
  return useCallback((key: string, value: string | null) => connection.prefs?.put(key, value), [connection]);
}

const NO_REJECTS: readonly SubmitReject[] = Object.freeze([]);

/** Orders the logged-in user had refused at submit in this tab, newest first. */
export function useSubmitRejects(): readonly SubmitReject[] {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const subscribe = useCallback((notify: () => void) => connection.submitRejects?.subscribe(notify) ?? (() => {}), [connection, session]);
  const getSnapshot = useCallback(() => connection.submitRejects?.getSnapshot() ?? NO_REJECTS, [connection, session]);
  return useSyncExternalStore(subscribe, getSnapshot);
}
