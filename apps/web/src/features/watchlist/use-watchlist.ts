/**
 * The logged-in user's watchlist, kept as the `watchlist` preference on the server (so another
 * browser shows the same list), shared by every page that shows or adds to it (the watchlist,
 * the finder's "Add to watchlist", the workspace).
 */

import { useCallback, useMemo } from 'react';
import { useConnectionSnapshot, usePrefs, usePutPref } from '../../connection/hooks.js';
import { WATCHLIST_PREF, loadWatchlist, parseSubjectInput, parseWatchlist, type SubjectInputResult } from './watchlist-subjects.js';

/** Browser localStorage when usable: where earlier versions kept the watchlist. */
function localStore(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

/** The watchlist and its changes; `subjects` is undefined until the user's preferences are read. */
export interface Watchlist {
  subjects: readonly string[] | undefined;
  /** Adds typed text or a subject (parseSubjectInput's rules); the result says why not. */
  add(text: string): SubjectInputResult;
  remove(subject: string): void;
}

/** The user's watchlist (the `watchlist` preference; else an earlier version's local copy, else the defaults). */
export function useWatchlist(): Watchlist {
  const { session } = useConnectionSnapshot();
  const user = session?.user ?? '';
  const prefs = usePrefs();
  const put = usePutPref();
  const raw = prefs.values[WATCHLIST_PREF];
  const loading = prefs.status === 'loading';
  const subjects = useMemo(() => (loading ? undefined : (parseWatchlist(raw) ?? loadWatchlist(localStore(), user))), [loading, raw, user]);
  const add = useCallback(
    (text: string): SubjectInputResult => {
      if (subjects === undefined) return { ok: false, message: 'Your watchlist is still loading; try again in a moment' };
      const parsed = parseSubjectInput(text, subjects ?? []);
      if (parsed.ok) put(WATCHLIST_PREF, JSON.stringify([...subjects, parsed.subject]));
      return parsed;
    },
    [put, subjects],
  );
  const remove = useCallback(
    (subject: string) => {
      if (subjects !== undefined) put(WATCHLIST_PREF, JSON.stringify(subjects.filter((s) => s !== subject)));
    },
    [put, subjects],
  );
  return { subjects, add, remove };
}
