import { useEffect, useState } from 'react';

/**
 * Debounced copy of `value`: takes each new value `ms` after the last change, so a query typed
 * key by key reaches the server once the typing pauses (finder quick filter, ticket instrument
 * search).
 */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
