#!/usr/bin/env node
// Generator capacity: how many updates per second the Rust client simulator receives, and at
// what CPU, independent of the Tidewire server. A minimal uWebSockets.js "blaster" in this
// process speaks just enough of the protocol (login, subscribe + images, ping) and then sends
// `record.update`s at a fixed total rate, `--per-frame` per WebSocket frame (1 = the server's
// batching off), round robin over every (user, record). The simulator is spawned as in a real
// run. Prints delivered/s, lost, latency and both processes' CPU (% of one core).
//
//   node packages/loadgen/bench/generator-capacity.mjs --rate 300000 --users 2000 --subs 10 --seconds 10
//
// Needs `npm run build -w @tidewire/loadgen` (the simulator binary). Bounded: exits after
// warm-up + measurement (+ 60 s of connect allowance) whatever happens.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import uWS from 'uWebSockets.js';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const rate = Number(args.rate ?? 300_000);
const users = Number(args.users ?? 2000);
const subs = Number(args.subs ?? 10);
const seconds = Number(args.seconds ?? 10);
const perFrame = Number(args['per-frame'] ?? 1);
const threads = Number(args.threads ?? 2);
if (![rate, users, subs, seconds, perFrame, threads].every((n) => Number.isInteger(n) && n > 0)) {
  console.error('usage: generator-capacity.mjs [--rate 300000] [--users 2000] [--subs 10] [--seconds 10] [--per-frame 1] [--threads 2]');
  process.exit(2);
}
const subjectCount = users * subs;
const now = () => performance.timeOrigin + performance.now();
const hardStop = setTimeout(() => {
  console.error('generator-capacity: time bound reached');
  process.exit(1);
}, (seconds + 2 + 60) * 1000);

// --- blaster ---------------------------------------------------------------------------------
const live = []; // { ws, ids: number[], seqs: Map }
let sessions = 0;
let sendBuffered = 0;
let sendDropped = 0;
const idOf = (subject) => Number(subject.slice(subject.lastIndexOf('/') + 1)) + 1;
const fields = '{"a":12345,"b":23456,"c":34567,"d":45678,"s":"xxxxxx"}'; // 54 bytes

const app = uWS.App().ws('/stream', {
  compression: uWS.DISABLED,
  maxPayloadLength: 1 << 20,
  maxBackpressure: 64 << 20,
  idleTimeout: 0,
  open: (ws) => {
    ws.getUserData().state = { ids: [], seq: [] };
  },
  message: (ws, data) => {
    const m = JSON.parse(Buffer.from(data).toString());
    const st = ws.getUserData().state;
    if (m.type === 'session.login') {
      ws.send(JSON.stringify([{ type: 'session.loggedIn', reqId: m.reqId, sessionId: ++sessions, user: 'alice', role: 'trader', tier: 'T1', token: 't', tokenExpiresAt: now() + 3.6e6, heartbeatMs: 5000, serverTime: now() }]));
    } else if (m.type === 'record.subscribe') {
      const records = m.subjects.map((subject) => ({ subject, id: idOf(subject), pending: false }));
      const images = m.subjects.map((subject) => ({ type: 'record.image', id: idOf(subject), subject, seq: 1, ts: now(), fields: JSON.parse(fields) }));
      ws.send(JSON.stringify([{ type: 'record.subscribed', reqId: m.reqId, records }, ...images]));
      st.ids = records.map((r) => r.id);
      st.seq = st.ids.map(() => 1);
      st.ws = ws;
      live.push(st);
    } else if (m.type === 'session.ping') {
      ws.send(JSON.stringify([{ type: 'session.pong', reqId: m.reqId, ts: m.ts, serverTime: now() }]));
    }
  },
  close: (ws) => {
    const st = ws.getUserData().state;
    const i = live.indexOf(st);
    if (i >= 0) live.splice(i, 1);
  },
});
const port = await new Promise((resolve, reject) =>
  app.listen('127.0.0.1', 0, (s) => (s ? resolve(uWS.us_socket_local_port(s)) : reject(new Error('cannot listen')))),
);

let cursor = 0; // round robin over (user, record)
let sent = 0;
let startMs = 0;
let blasting = false;
const ticker = setInterval(() => {
  if (!blasting || live.length === 0) return;
  // at most 5 ms worth per tick, so a blaster that cannot keep up stays responsive (and says so)
  const due = Math.min(Math.ceil(rate / 200), Math.floor(((now() - startMs) * rate) / 1000) - sent);
  let left = due;
  while (left > 0) {
    const st = live[Math.floor(cursor / subs) % live.length];
    const n = Math.min(perFrame, left);
    const ts = now();
    let frame = '[';
    for (let k = 0; k < n; k++) {
      const j = (cursor + k) % subs;
      st.seq[j] += 1;
      frame += `${k ? ',' : ''}{"type":"record.update","id":${st.ids[j]},"seq":${st.seq[j]},"ts":${ts},"fields":${fields}}`;
    }
    frame += ']';
    const r = st.ws.send(frame);
    if (r === 0) sendBuffered++;
    else if (r === 2) sendDropped++;
    cursor += n;
    left -= n;
  }
  sent += due;
}, 1);

// --- simulator -------------------------------------------------------------------------------
const binary = fileURLToPath(new URL('../native/target/release/tidewire-loadgen-clients', import.meta.url));
const mono = Number(process.hrtime.bigint()) / 1e6;
const child = spawn(binary, [
  '--url', `ws://127.0.0.1:${port}/stream`, '--subject-prefix', '/BENCH/cap', '--subject-count', String(subjectCount),
  '--subs-per-user', String(subs), '--threads', String(threads), '--clock-epoch-ms', now().toFixed(3), '--clock-mono-ms', mono.toFixed(3),
  '--max-seconds', String(seconds + 120),
]);
child.stderr.pipe(process.stderr);
const lines = createInterface({ input: child.stdout });
const waiting = [];
lines.on('line', (l) => waiting.shift()?.(JSON.parse(l)));
const next = () => new Promise((resolve) => waiting.push(resolve));
const command = (c) => {
  const p = next();
  child.stdin.write(`${JSON.stringify(c)}\n`);
  return p;
};
const delay = (ms) => new Promise((r) => setTimeout(r, ms));

await next(); // ready
const connected = await command({ cmd: 'connect', users });
console.log(`connected ${connected.ready}/${users} users (${connected.failed} failed ${connected.errors.join('; ')})`);
startMs = now();
blasting = true;
await delay(2000); // warm-up
const r0 = await command({ cmd: 'report' });
const t0 = now();
const sent0 = sent;
const cpu0 = process.cpuUsage();
sendBuffered = 0;
await delay(seconds * 1000);
const r1 = await command({ cmd: 'report' });
const t1 = now();
const sentPerSec = Math.round((sent - sent0) / ((t1 - t0) / 1000));
const cpu1 = process.cpuUsage(cpu0);
blasting = false;
const wallMs = t1 - t0;
const clientCpu = (r1.cpuUserMicros + r1.cpuSystemMicros - r0.cpuUserMicros - r0.cpuSystemMicros) / 1000 / wallMs;
const lat = r1.latencyMicros;
console.log(JSON.stringify({
  targetPerSec: rate, blasterSentPerSec: sentPerSec, perFrame, users: connected.ready, subsPerUser: subs, threads,
  deliveredPerSec: Math.round(r1.updates / (wallMs / 1000)), framesPerSec: Math.round(r1.frames / (wallMs / 1000)),
  lost: r1.lost, outOfOrder: r1.outOfOrder,
  latencyMs: { mean: +(lat.mean / 1000).toFixed(3), p50: lat.p50 / 1000, p99: lat.p99 / 1000, max: lat.max / 1000 },
  wallMs: Math.round(wallMs),
  clientCpuPctOfOneCore: +(clientCpu * 100).toFixed(1),
  clientUserVsSystem: `${((r1.cpuUserMicros - r0.cpuUserMicros) / 1000).toFixed(0)} ms user / ${((r1.cpuSystemMicros - r0.cpuSystemMicros) / 1000).toFixed(0)} ms system`,
  blasterCpuPctOfOneCore: +(((cpu1.user + cpu1.system) / 1000 / wallMs) * 100).toFixed(1),
  blasterSendsBuffered: sendBuffered, blasterSendsDropped: sendDropped,
}, null, 2));
await command({ cmd: 'stop' });
clearInterval(ticker);
clearTimeout(hardStop);
app.close?.();
process.exit(0);
