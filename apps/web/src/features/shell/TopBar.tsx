import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { LatencyIndicator } from './LatencyIndicator.js';
import { StatusPill } from './StatusPill.js';

/** Product name, connection status, latency, the signed-in user and tier, logout. */
export function TopBar() {
  const connection = useConnection();
  const { session } = useConnectionSnapshot();
  return (
    <header className="topbar">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <span>Tidewire</span>
      </div>
      <div className="topbar-status">
        <StatusPill />
        <LatencyIndicator />
      </div>
      <div className="topbar-user">
        {session !== undefined && (
          <span className="user-chip" data-testid="session-user">
            <span className="user-name">{session.user}</span>
            <span className="user-meta">{session.role}</span>
            <span className="tier" title="Price tier" data-testid="session-tier">
              {session.tier}
            </span>
          </span>
        )}
        <button type="button" className="button-quiet" onClick={() => connection.logout()} data-testid="logout">
          Log out
        </button>
      </div>
    </header>
  );
}
