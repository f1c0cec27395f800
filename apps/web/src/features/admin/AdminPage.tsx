import { useCallback, useEffect, useRef, useState } from 'react';
import type { AdminFixSessionInfo, AdminMetricsSample, AdminSessionInfo, AdminViewInfo, BatchingSettings } from '@tidewire/protocol';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { AdminApiError, fetchAdminMetrics, fetchAdminViews, fetchFixSessions, kickSession, logoutFixSession, updateSettings, type AdminApiOptions } from './admin-api.js';
import { FixSessionsTable } from './FixSessionsTable.js';
import { MetricsChart } from './MetricsChart.js';
import { CHARTS, mergeSamples } from './metrics-window.js';
import { SessionsGrid } from './SessionsGrid.js';
import { SettingsPanel } from './SettingsPanel.js';
import { ViewsGrid } from './ViewsGrid.js';
import { plural } from '../shell/plural.js';
import './admin.css';

/** Retry period of the history fetch when it fails, ms. */
const RETRY_MS = 2000;
/** Period of the views table refresh (`GET /api/admin/views`; its rates span two listings), ms. */
const VIEWS_POLL_MS = 2000;

/** Shown to non-admins: the console is not theirs (and the API would answer 403 anyway). */
function NotEntitled({ role }: { role: string | undefined }) {
  return (
    <section className="coming-later" aria-labelledby="not-entitled-title" data-testid="not-entitled">
      <h1 id="not-entitled-title">Admin</h1>
      <p className="coming-later-badge">Not entitled</p>
      <p>The admin console needs the admin role; you are logged in as {role ?? 'unknown'}.</p>
    </section>
  );
}

/** Live metrics charts (5 minutes), sessions with kick, batching settings, FIX sessions with logout, the views table. Admin role only. */
export function AdminPage() {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  const token = session?.token;
  const isAdmin = session?.role === 'admin';
  const [samples, setSamples] = useState<AdminMetricsSample[]>([]);
  const [sessions, setSessions] = useState<AdminSessionInfo[]>([]);
  const [views, setViews] = useState<AdminViewInfo[]>([]);
  const [fixSessions, setFixSessions] = useState<AdminFixSessionInfo[]>([]);
  const [viewsError, setViewsError] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [kickReason, setKickReason] = useState('kicked by an administrator');
  const [notice, setNotice] = useState<string | undefined>();
  const api = useRef<AdminApiOptions | undefined>(undefined);
  api.current = token === undefined ? undefined : { token };

  // The 5-minute history comes once over HTTP; from then on the server pushes each interval
  // (admin.metrics over the session's WebSocket, resubscribed by the SDK after a reconnect).
  useEffect(() => {
    if (!isAdmin) return;
    let stopped = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const stream = connection.adminMetrics({
      onMetrics: (m) => {
        if (stopped) return;
        setSamples((prev) => mergeSamples(prev, [m.sample]));
        setSessions(m.sessions);
        setError(undefined);
      },
      onError: (err) => {
        if (!stopped) setError(`${err.code}: ${err.message}`);
      },
    });
    const loadHistory = async (): Promise<void> => {
      const o = api.current;
      if (!o || stopped) return;
      try {
        const r = await fetchAdminMetrics(o);
        if (stopped) return;
        setSamples((prev) => mergeSamples(prev, r.sample ? [...r.history, r.sample] : r.history));
        setSessions((prev) => (prev.length > 0 ? prev : r.sessions));
      } catch (err) {
        if (stopped) return;
        setError(err instanceof AdminApiError ? `${err.code}: ${err.message}` : String(err));
        retry = setTimeout(() => void loadHistory(), RETRY_MS);
      }
    };
    void loadHistory();
    return () => {
      stopped = true;
      stream?.stop();
      if (retry !== undefined) clearTimeout(retry);
    };
  }, [isAdmin, connection, session?.sessionId]);

  // The views table is polled: the engine thread answers a listing at its next pass.
  useEffect(() => {
    if (!isAdmin) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async (): Promise<void> => {
      const o = api.current;
      if (!o || stopped) return;
      try {
        const [r, fix] = await Promise.all([fetchAdminViews(o), fetchFixSessions(o)]);
        if (stopped) return;
        setViews(r.views);
        setFixSessions(fix);
        setViewsError(undefined);
      } catch (err) {
        if (!stopped) setViewsError(err instanceof AdminApiError ? `${err.code}: ${err.message}` : String(err));
      }
      if (!stopped) timer = setTimeout(() => void poll(), VIEWS_POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [isAdmin, session?.sessionId]);

  /** The session a Kick click picked, waiting for the admin's confirm. */
  const [pendingKick, setPendingKick] = useState<AdminSessionInfo | undefined>(undefined);
  const onKick = useCallback((s: AdminSessionInfo) => setPendingKick(s), []);
  const confirmKick = useCallback((s: AdminSessionInfo) => {
    setPendingKick(undefined);
    const o = api.current;
    if (!o) return;
    kickSession(o, s.sessionId, kickReason).then(
      () => setNotice(`session ${s.sessionId} (${s.user}) kicked: ${kickReason}`),
      (err: unknown) => setNotice(`kick of session ${s.sessionId} failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  }, [kickReason]);

  const onFixLogout = useCallback((s: AdminFixSessionInfo) => {
    const o = api.current;
    if (!o) return;
    const name = `${s.beginString} ${s.targetCompId}->${s.senderCompId}`;
    logoutFixSession(o, s).then(
      () => setNotice(`FIX session ${name} (${s.user}) logged out`),
      (err: unknown) => setNotice(`logout of FIX session ${name} failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  }, []);

  const onApply = useCallback(async (patch: Partial<BatchingSettings>): Promise<string> => {
    const o = api.current;
    if (!o) throw new Error('not logged in');
    const change = await updateSettings(o, patch);
    return `applied: ${Object.keys(patch).map((k) => `${k} ${change.old[k as keyof BatchingSettings]} -> ${change.new[k as keyof BatchingSettings]}`).join(', ')}`;
  }, []);

  if (!isAdmin) return <NotEntitled role={session?.role} />;
  const latest = samples.at(-1);
  return (
    <section className="admin-page" aria-labelledby="admin-title" data-testid="admin-page">
      <div className="page-header">
        <h1 id="admin-title">Admin</h1>
        <span className="page-hint" data-testid="admin-updated">
          {latest ? `updated ${new Date(latest.at).toLocaleTimeString()} · ${plural(latest.sessions, 'session')} · ${plural(latest.records, 'record')} · ${plural(latest.subscriptions, 'subscription')}` : 'waiting for the first metrics interval…'}
        </span>
      </div>
      {error !== undefined && <p className="inline-error" role="alert" data-testid="admin-error">{error}</p>}
      <div className="admin-charts">
        {CHARTS.map((spec) => <MetricsChart key={spec.id} spec={spec} samples={samples} />)}
      </div>
      <div className="admin-lower">
        <div className="admin-sessions-panel">
          <div className="page-header">
            <h2>Sessions</h2>
            <label className="page-hint">
              kick reason{' '}
              <input value={kickReason} maxLength={100} onChange={(e) => setKickReason(e.target.value)} data-testid="kick-reason" />
            </label>
            {notice !== undefined && <span className="page-hint" role="status" data-testid="admin-notice">{notice}</span>}
          </div>
          {pendingKick !== undefined && (
            <div className="admin-kick-confirm" role="alertdialog" aria-label="Confirm the kick" data-testid="kick-confirm">
              <span>{`Disconnect session ${pendingKick.sessionId} of ${pendingKick.user} (${pendingKick.address}) with "${kickReason}"?`}</span>
              <button type="button" className="button-danger" autoFocus onClick={() => confirmKick(pendingKick)} data-testid="kick-confirm-yes">
                Kick
              </button>
              <button type="button" className="button-quiet" onClick={() => setPendingKick(undefined)} data-testid="kick-confirm-no">
                Cancel
              </button>
            </div>
          )}
          <SessionsGrid sessions={sessions} onKick={onKick} selfSessionId={session?.sessionId} />
        </div>
        <SettingsPanel current={latest?.batching} onApply={onApply} />
      </div>
      <div className="admin-fix-panel">
        <div className="page-header">
          <h2>FIX sessions</h2>
          <span className="page-hint">refreshed every {VIEWS_POLL_MS / 1000} s</span>
        </div>
        <FixSessionsTable sessions={fixSessions} onLogout={onFixLogout} />
      </div>
      <div className="admin-views-panel">
        <div className="page-header">
          <h2>Views</h2>
          <span className="page-hint" data-testid="admin-views-count">{plural(views.length, 'view')} materialised (identical requests share one) · refreshed every {VIEWS_POLL_MS / 1000} s</span>
          {viewsError !== undefined && <span className="inline-error" role="alert" data-testid="admin-views-error">{viewsError}</span>}
        </div>
        <ViewsGrid views={views} />
      </div>
    </section>
  );
}
