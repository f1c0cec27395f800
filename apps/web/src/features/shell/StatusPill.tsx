import { useConnectionSnapshot } from '../../connection/hooks.js';
import { statusView } from './status.js';

/** Connection status: connected / connecting / reconnecting / closed, with the close reason as tooltip. */
export function StatusPill() {
  const { state, closeDetail } = useConnectionSnapshot();
  const view = statusView(state, closeDetail);
  return (
    <span
      className={`status-pill tone-${view.tone}`}
      role="status"
      aria-live="polite"
      title={view.title}
      data-testid="status-pill"
      data-state={state}
    >
      <span className="status-dot" aria-hidden="true" />
      {view.label}
    </span>
  );
}
