import { useEffect, useRef, useState } from 'react';
import { blotterSubject } from '@tidewire/protocol';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { noticeRow, orderNotices, type NoticeRow, type OrderNotice, type Seen } from './order-notices.js';
import './notifications.css';

/** Newest orders watched for news (the blotter's top rows). */
const WATCHED = 50;
/** How long a notice stays, ms (it can be closed before). */
const NOTICE_MS = 8_000;
/** Most notices on screen; older ones make room. */
const MAX_SHOWN = 4;

/**
 * Fills, rejects and expiries of the trader's orders as notices, on every page: a view of the
 * newest rows of the user's blotter, compared with what was seen (order-notices.ts). Polite live
 * region: a screen reader reads each notice once.
 */
export function Notifications() {
  const connection = useConnection();
  const { session, state } = useConnectionSnapshot();
  const [notices, setNotices] = useState<OrderNotice[]>([]);
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  const user = session?.role === 'trader' || session?.role === 'admin' ? session.user : undefined;

  useEffect(() => {
    if (user === undefined || state !== 'loggedIn') return undefined;
    const seen: Seen = new Map();
    let baseline = true;
    const handle = connection.view(
      { container: blotterSubject(user), window: { offset: 0, size: WATCHED } },
      {
        onRows: (rows) => {
          const parsed = rows.map((r) => noticeRow(r.fields)).filter((r): r is NoticeRow => r !== undefined);
          const fresh = orderNotices(parsed, seen, baseline);
          baseline = false;
          if (fresh.length === 0) return;
          setNotices((shown) => [...shown.filter((n) => !fresh.some((f) => f.id === n.id)), ...fresh].slice(-MAX_SHOWN));
        },
      },
    );
    return () => handle?.close();
  }, [connection, user, state]);

  useEffect(() => {
    const live = timers.current;
    for (const n of notices) {
      if (live.has(n.id)) continue;
      live.set(n.id, setTimeout(() => {
        live.delete(n.id);
        setNotices((shown) => shown.filter((s) => s.id !== n.id));
      }, NOTICE_MS));
    }
  }, [notices]);
  useEffect(() => () => {
    for (const t of timers.current.values()) clearTimeout(t);
  }, []);

  return (
    <div className="notices" aria-live="polite" data-testid="notices">
      {notices.map((n) => (
        <div key={n.id} className={`notice notice-${n.tone}`} data-testid="notice" data-tone={n.tone} data-order-id={n.orderId}>
          <span className="notice-text">{n.text}</span>
          <button type="button" className="notice-close" aria-label="Dismiss" onClick={() => setNotices((shown) => shown.filter((s) => s.id !== n.id))}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
