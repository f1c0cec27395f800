#!/usr/bin/env node
// Source capacity: how many updates per second the blotter's source publishes, and at what CPU,
// with 1..N source threads (feed-shards.ts), independent of the Tidewire server. A child process
// runs a minimal uWebSockets.js sink on `/source` (login, ping/pong; publishes counted, not
// applied); this process runs the real blotter shards (`blotterShard`: images, containers, then
// every trade updated once per `--period` s plus new trades) against it. Prints expected vs
// published updates/s, lateness, and CPU (% of one core) of this process (the shards) and the sink.
//
//   node packages/loadgen/bench/source-capacity.mjs --users 2000 --trades 122 --threads 4 --seconds 10
//
// Needs `npm run build -w @tidewire/loadgen` (dist/). Bounded: exits after setup + warm-up +
// measurement (+ 120 s allowance) whatever happens.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);

if (process.argv[2] === '--sink') {
  // ---- the sink (child process) ----------------------------------------------------------------
  const { default: uWS } = await import('uWebSockets.js');
  let publishes = 0;
  const now = () => performance.timeOrigin + performance.now();
  const needle = Buffer.from('"record.publish"');
  const app = uWS.App().ws('/source', {
    compression: uWS.DISABLED,
    maxPayloadLength: 64 << 20,
    idleTimeout: 0,
    message: (ws, data) => {
      const buf = Buffer.from(data);
      if (buf[0] === 0x5b) {
        // a publish frame: count its messages without parsing them
        for (let at = buf.indexOf(needle); at !== -1; at = buf.indexOf(needle, at + needle.length)) publishes++;
        return;
      }
      const m = JSON.parse(buf.toString());
      if (m.type === 'session.login') {
        ws.send(JSON.stringify([{ type: 'session.loggedIn', reqId: m.reqId, sessionId: 1, user: m.user, role: 'source', tier: 'T1', token: 't', tokenExpiresAt: now() + 3.6e6, heartbeatMs: 5000, serverTime: now() }]));
      } else if (m.type === 'session.ping') {
        ws.send(JSON.stringify([{ type: 'session.pong', reqId: m.reqId, ts: m.ts, serverTime: now() }]));
      }
    },
  });
  app.listen('127.0.0.1', 0, (token) => {
    if (!token) process.exit(1);
    process.send({ port: uWS.us_socket_local_port(token) });
  });
  process.on('message', (m) => {
    if (m === 'take') {
      const u = process.cpuUsage();
      process.send({ publishes, cpuMicros: u.user + u.system });
      publishes = 0;
    } else if (m === 'stop') process.exit(0);
  });
  setTimeout(() => process.exit(1), 3_600_000).unref();
} else {
  // ---- the generator ---------------------------------------------------------------------------
  const users = Number(args.users ?? 2000);
  const trades = Number(args.trades ?? 122);
  const threads = Number(args.threads ?? 4);
  const seconds = Number(args.seconds ?? 10);
  const period = Number(args.period ?? 3);
  if (![users, trades, threads, seconds, period].every((n) => Number.isFinite(n) && n > 0) || !Number.isInteger(threads)) {
    console.error('usage: source-capacity.mjs [--users 2000] [--trades 122] [--threads 4] [--seconds 10] [--period 3]');
    process.exit(2);
  }
  const dist = (f) => new URL(`../dist/${f}`, import.meta.url).href;
  const { startFeedShards } = await import(dist('sources/feed-shards.js'));
  const { blotterShard } = await import(dist('presets/blotter-feed.js'));
  const { epochNowMs } = await import(dist('util/clock.js'));
  const hardStop = setTimeout(() => {
    console.error('source-capacity: time bound reached');
    process.exit(1);
  }, (seconds + 3 + 120) * 1000);
  hardStop.unref();
  const sink = fork(fileURLToPath(import.meta.url), ['--sink'], { stdio: 'inherit' });
  const fromSink = () => new Promise((resolve) => sink.once('message', resolve));
  const { port } = await fromSink();
  const take = async () => {
    sink.send('take');
    return fromSink();
  };
  const sab = new SharedArrayBuffer(users * trades * 8);
  const feed = await startFeedShards({
    url: `ws://127.0.0.1:${port}`, user: 'feed', password: 'x', shards: threads, script: 'blotter', factory: blotterShard,
    init: { maxUsers: users, tradeCap: trades, lastSent: sab }, maxSeconds: seconds + 120,
  });
  const t0 = performance.now();
  // every trade exists from the start: the whole cycle publishes (users x trades / period)
  await feed.all('add', () => ({ from: 0, to: users, initialTrades: trades }));
  const setupS = (performance.now() - t0) / 1000;
  await feed.all('start', () => ({ users, startMs: epochNowMs() + 20, durationMs: (seconds + 5) * 1000, statusPeriodS: period }));
  await new Promise((r) => setTimeout(r, 2000)); // warm-up: the measurement window starts on a running feed
  await feed.take();
  const sink0 = await take();
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const { stats } = await feed.take();
  const got = await take();
  const wall = (performance.now() - w0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await feed.stop();
  sink.send('stop');
  const expected = (users * trades) / period;
  const genPct = ((cpu.user + cpu.system) / 1e6 / wall) * 100;
  const r = {
    users, trades, threads, inWorkers: feed.inWorkers, setupS: Number(setupS.toFixed(1)), seconds: Number(wall.toFixed(2)),
    expectedPerSec: Math.round(expected), publishedPerSec: Math.round(stats.published / wall), sinkReceivedPerSec: Math.round(got.publishes / wall),
    framesPerSec: Math.round(stats.frames / wall), lateOver1MsPct: Number(((100 * stats.lateOver1Ms) / Math.max(1, stats.updates)).toFixed(2)),
    worstLatenessMs: Number(stats.maxLatenessMs.toFixed(1)), generatorCpuPct: Number(genPct.toFixed(1)),
    sinkCpuPct: Number((((got.cpuMicros - sink0.cpuMicros) / 1e6 / wall) * 100).toFixed(1)),
    cpuMicrosPerUpdate: Number(((cpu.user + cpu.system) / Math.max(1, stats.published)).toFixed(2)),
  };
  console.log(JSON.stringify(r));
  process.exit(0);
}
