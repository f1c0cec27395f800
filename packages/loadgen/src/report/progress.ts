/**
 * The progress display: a bar redrawn in place on a terminal (stderr), or one line per phase
 * when stderr is not a terminal (CI logs). Step results and their notes are always printed.
 */

import type { Progress } from '../presets/runner.js';

const WIDTH = 24;

function bar(fraction: number): string {
  const n = Math.max(0, Math.min(WIDTH, Math.round(fraction * WIDTH)));
  return `[${'#'.repeat(n)}${'-'.repeat(WIDTH - n)}]`;
}

/** Returns an `onProgress` that draws on `out` (default stderr). */
export function progressPrinter(out: NodeJS.WriteStream = process.stderr): (p: Progress) => void {
  const tty = out.isTTY === true;
  let lastPhase = '';
  const line = (text: string, final: boolean): void => {
    if (tty) out.write(`\r\x1b[2K${text}${final ? '\n' : ''}`);
    else if (final) out.write(`${text}\n`);
  };
  return (p) => {
    switch (p.phase) {
      case 'source':
        line(`source: ${p.message}`, true);
        return;
      case 'connect':
        line(`${bar(p.stepIndex / p.steps)} step ${p.stepIndex + 1}/${p.steps}: connecting up to ${p.target} users`, !tty);
        return;
      case 'warmup':
      case 'measure': {
        const key = `${p.phase}${p.stepIndex}`;
        const frac = (p.stepIndex + (p.phase === 'measure' ? 0.3 + 0.7 * (p.elapsedS / p.totalS) : 0.3 * (p.elapsedS / Math.max(p.totalS, 1e-9)))) / p.steps;
        const text = `${bar(frac)} step ${p.stepIndex + 1}/${p.steps}: ${p.target} users, ${p.phase} ${p.elapsedS.toFixed(0)}/${p.totalS}s`;
        if (tty) line(text, false);
        else if (key !== lastPhase) line(text, true);
        lastPhase = key;
        return;
      }
      case 'step': {
        const r = p.result;
        const cpu = r.serverCpuPct === null ? 'n/a' : `${r.serverCpuPct}%`;
        line(
          `${bar((p.stepIndex + 1) / p.steps)} step ${p.stepIndex + 1}/${p.steps}: ${r.users} users, ${r.deliveredPerSec}/${r.expectedPerSec} upd/s, ` +
            `mean ${r.latencyMs.mean} ms, p99 ${r.latencyMs.p99} ms, lost ${r.lost}, server CPU ${cpu}, generator CPU ${r.generatorCpuPct}%`,
          true,
        );
        for (const n of p.notes) out.write(`  note: ${n}\n`);
      }
    }
  };
}
