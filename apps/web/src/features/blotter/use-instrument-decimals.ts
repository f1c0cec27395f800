/**
 * React hook: the price decimals of the instruments the blotter's rows name, read from their
 * instrument records (instrumentDecimals: the tick's decimals). Rows call `note(subject)` as they
 * arrive; each instrument is watched once its first row is seen, and its decimals are kept once
 * its record has an image.
 */

import { useCallback, useRef, useState } from 'react';
import type { RecordSnapshot } from '../../connection/record-store.js';
import { useRecordStream } from '../../connection/hooks.js';
import { instrumentDecimals } from './blotter-row.js';

/** What useInstrumentDecimals returns. */
export interface InstrumentDecimals {
  /** Decimals per instrument subject whose record has been seen. */
  readonly decimals: ReadonlyMap<string, number>;
  /** Starts watching `subject`'s record (no-op for '' or one already watched). */
  note(subject: string): void;
}

export function useInstrumentDecimals(): InstrumentDecimals {
  const seen = useRef(new Set<string>());
  const [subjects, setSubjects] = useState<readonly string[]>([]);
  const [decimals, setDecimals] = useState<ReadonlyMap<string, number>>(new Map());

  const note = useCallback((subject: string) => {
    if (subject === '' || seen.current.has(subject)) return;
    seen.current.add(subject);
    setSubjects([...seen.current]);
  }, []);

  const onChanged = useCallback((changed: readonly RecordSnapshot[]) => {
    setDecimals((known) => {
      let next: Map<string, number> | undefined;
      for (const snapshot of changed) {
        // before its first image (or refused) a record says nothing about its decimals
        if (snapshot.seq === 0 || Object.keys(snapshot.fields).length === 0) continue;
        const d = instrumentDecimals(snapshot.fields);
        if (known.get(snapshot.subject) === d) continue;
        next ??= new Map(known);
        next.set(snapshot.subject, d);
      }
      return next ?? known;
    });
  }, []);
  useRecordStream(subjects, onChanged);
  return { decimals, note };
}
