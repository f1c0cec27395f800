import type { AdminFixSessionInfo } from '@tidewire/protocol';
import { fixStoreText } from './fix-store.js';

/** Stable key of a FIX session: version and both CompIDs. */
export const fixSessionKey = (s: AdminFixSessionInfo): string => `${s.beginString} ${s.senderCompId} ${s.targetCompId}`;

/**
 * The FIX sessions (state, sequence numbers, messages/s, the session store's health) with a
 * logout action for logged-on ones.
 */
export function FixSessionsTable({ sessions, onLogout }: { sessions: AdminFixSessionInfo[]; onLogout: (s: AdminFixSessionInfo) => void }) {
  if (sessions.length === 0) return <p className="page-hint" data-testid="admin-fix-off">No FIX sessions (the FIX gateway is off: fix.port).</p>;
  return (
    <table className="admin-fix" data-testid="admin-fix">
      <thead>
        <tr>
          <th>session</th><th>user</th><th>state</th><th>seq out</th><th>seq in</th><th>msgs in/s</th><th>msgs out/s</th><th>store</th><th />
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <tr key={fixSessionKey(s)} data-testid="admin-fix-row" data-state={s.state} data-store={s.storeError === undefined ? 'ok' : 'failed'}>
            <td>{s.beginString} {s.targetCompId}→{s.senderCompId}</td>
            <td>{s.user}</td>
            <td>{s.state}</td>
            <td title="MsgSeqNum of our next message">{s.nextSenderSeq}</td>
            <td title="MsgSeqNum expected next">{s.nextTargetSeq}</td>
            <td>{s.messagesInPerSec}</td>
            <td>{s.messagesOutPerSec}</td>
            <td className={s.storeError === undefined ? undefined : 'admin-fix-store-failed'} title={`store write/sync failures since start: ${s.storeFailures}`} data-testid="admin-fix-store">
              {fixStoreText(s)}
            </td>
            <td>
              <button type="button" disabled={s.state !== 'loggedOn'} onClick={() => onLogout(s)} data-testid="admin-fix-logout">
                Logout
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
