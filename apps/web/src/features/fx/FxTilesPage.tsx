import { FX_PAIRS } from './fx-pairs.js';
import { FxTile } from './FxTile.js';
import { plural } from '../shell/plural.js';

/** All demo FX pairs as live tiles. Each tile subscribes to its own record. */
export function FxTilesPage() {
  return (
    <section className="fx-page" aria-labelledby="fx-title">
      <div className="page-header">
        <h1 id="fx-title">FX tiles</h1>
        <p className="page-hint">{plural(FX_PAIRS.length, 'pair')} · streaming bid/ask · spread in pips · change since open</p>
      </div>
      <div className="fx-grid" data-testid="fx-grid">
        {FX_PAIRS.map((pair) => (
          <FxTile key={pair} pair={pair} />
        ))}
      </div>
    </section>
  );
}
