#!/usr/bin/env node
// Pacing alone: `runPaced` at a fixed rate with one of the pacer's timers and no sockets; prints
// the mean and worst lateness of the sends (send time - schedule, after the first 0.5 s: the
// worker ticker's thread takes ~20-40 ms to start) and this process's CPU (% of one core, both
// threads), to weigh `--tick-ms` against CPU. Run it under the bench lock.
//
//   node packages/loadgen/bench/pacing.mjs --ticks worker --tick-ms 0.25 --rate 20000 --seconds 4
//   node packages/loadgen/bench/pacing.mjs --ticks interval --rate 20000 --seconds 4
//
// Needs `npm run build -w @tidewire/loadgen` (dist/). Bounded by --seconds (at most 600).

const args = new Map();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const ticksName = args.get('ticks') ?? 'worker';
const tickMs = Number(args.get('tick-ms') ?? (ticksName === 'interval' ? 1 : 0.25));
const rate = Number(args.get('rate') ?? 20_000);
const seconds = Number(args.get('seconds') ?? 4);
if (!['worker', 'interval'].includes(ticksName) || !(tickMs > 0) || !(rate > 0) || !(seconds > 0.5 && seconds <= 600)) {
  process.stderr.write('usage: pacing.mjs [--ticks worker|interval] [--tick-ms 0.25] [--rate 20000] [--seconds 4 (0.5..600)]\n');
  process.exit(2);
}

const dist = (f) => new URL(`../dist/${f}`, import.meta.url).href;
const { Pacer, runPaced, workerTicks, intervalTicks } = await import(dist('util/pacer.js'));
const { epochNowMs } = await import(dist('util/clock.js'));

const start = epochNowMs() + 20;
const measureFrom = start + 500;
const pacer = new Pacer(rate, start);
let sum = 0;
let n = 0;
let worst = 0;
let ticks = 0;
const cpu0 = process.cpuUsage();
const loop = runPaced({
  pacer,
  clock: epochNowMs,
  untilMs: start + seconds * 1000,
  ticks: ticksName === 'worker' ? workerTicks : intervalTicks,
  tickMs,
  send: (due, now) => {
    ticks++;
    for (let i = due.first; i < due.first + due.count; i++) {
      const at = pacer.scheduledMs(i);
      if (at < measureFrom) continue;
      const late = now - at;
      sum += late;
      n++;
      if (late > worst) worst = late;
    }
  },
});
await loop.done;
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    ticks: ticksName,
    tickMs,
    rate,
    seconds,
    sends: pacer.taken,
    ticksWithSends: ticks,
    meanLatenessMs: Number((sum / Math.max(1, n)).toFixed(3)),
    worstLatenessMs: Number(worst.toFixed(2)),
    cpuPctOfCore: Number(((cpu.user + cpu.system) / 10 / (seconds * 1000)).toFixed(1)),
  }),
);
