import { useConnectionSnapshot, useLatency } from '../../connection/hooks.js';
import { latencyView } from './latency-view.js';

/** Live origin -> receipt latency (mean / p99 ms), refreshed every second; details in the tooltip. */
export function LatencyIndicator() {
  const latency = useLatency(1000);
  // while not logged in the figures would be the last connection's: show none
  const { state } = useConnectionSnapshot();
  const view = latencyView(state === 'loggedIn' ? latency : undefined);
  return (
    <span className={`latency tone-${view.tone}`} title={view.title} data-testid="latency" aria-label={`Latency mean ${view.mean} milliseconds, p99 ${view.p99} milliseconds`}>
      <span className="latency-label">latency</span>
      <span className="latency-figure" data-testid="latency-mean">{view.mean}</span>
      <span className="latency-unit">ms</span>
      <span className="latency-sep">p99</span>
      <span className="latency-figure" data-testid="latency-p99">{view.p99}</span>
      <span className="latency-unit">ms</span>
    </span>
  );
}
