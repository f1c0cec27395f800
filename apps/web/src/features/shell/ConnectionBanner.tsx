import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';
import { describeClose } from './status.js';

/**
 * Explains a connection problem above the page: "reconnecting" while the SDK retries (prices shown
 * may be stale), and "closed" when it gave up or the server ended the session (kicked, token
 * revoked), with a way back to the login page. Renders nothing while connected.
 */
export function ConnectionBanner() {
  const connection = useConnection();
  const { state, closeDetail } = useConnectionSnapshot();
  const why = describeClose(closeDetail);
  if (state === 'reconnecting') {
    return (
      <div className="banner banner-warn" role="status" data-testid="connection-banner">
        Connection lost{why === undefined ? '' : ` (${why})`}: reconnecting. Prices on screen may be stale until it is back.
      </div>
    );
  }
  if (state === 'closed') {
    return (
      <div className="banner banner-bad" role="alert" data-testid="connection-banner">
        <span>The connection is closed{why === undefined ? '' : ` (${why})`}. Prices on screen are no longer updating.</span>
        <button type="button" className="button-quiet" onClick={() => connection.logout()}>
          Log in again
        </button>
      </div>
    );
  }
  return null;
}
