#!/usr/bin/env node
// View-user capacity: how many view rows per second the simulated view users receive, and at
// what CPU, independent of the Tidewire server. A minimal uWebSockets.js "blaster" in this
// process (127.0.0.1 only) answers session.login, session.ping and view.create (a window of
// --window rows), then sends `view.rows` frames with --per-frame updated rows each at --rate
// rows/s in total, round robin over users and their window rows, seq +1 per row (a loss shows).
// The users are the Rust simulator (`--engine native`, `tidewire-loadgen-clients --mode views`,
// spawned as in a real run) or the Node view users (`--engine node`, dist/clients/view-users.js, one
// thread, in a child process so its CPU is its own). After a 2 s warm-up it measures --seconds
// and prints one JSON object: rows/s and frames/s received, lost/out of order (native only),
// the users' CPU (% of one core, user and total), rows per CPU core-second, what the blaster
// sent per second, the 1-minute load average (the machine is shared: compare ratios), the
// commit and the machine (cores, CPU model, Node version).
//
//   node packages/loadgen/bench/view-capacity.mjs --engine native --rate 100000 --users 2000 --window 50 --per-frame 5 --seconds 10
//
// Arguments (all optional):
//   --engine native|node   who runs the view users (default native)
//   --rate N               rows per second sent in total (default 100000)
//   --users N              view users, one view each (default 2000)
//   --window N             rows in each view's window (default 50)
//   --per-frame N          updated rows per view.rows frame (default 5)
//   --seconds N            measurement, 1..600 (default 10)
//   --threads N            simulator threads, native only (default 2)
//   --light true|false     light users: rows counted, not timed or sequence-checked (default false)
//   --help                 this text
//
// Needs `npm run build -w @tidewire/loadgen` (the simulator binary and dist/). Bounded: the users
// must be open within 60 s, and the process exits after warm-up + measurement + 90 s whatever happens.
import { execFileSync, fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const HELP = readFileSync(fileURLToPath(import.meta.url), 'utf8')
  .split('\n')
  .slice(1)
  .filter((l, i, all) => l.startsWith('//') && all.slice(0, i).every((p) => p.startsWith('//')))
  .map((l) => l.replace(/^\/\/ ?/, ''))
  .join('\n');
const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  console.log(HELP);
  process.exit(0);
}
const args = {};
for (let i = 0; i < argv.length; i += 2) {
  if (!argv[i].startsWith('--') || argv[i + 1] === undefined) {
    console.error(`view-capacity: expected --name value pairs, got ${JSON.stringify(argv[i])}\n\n${HELP}`);
    process.exit(2);
  }
  args[argv[i].slice(2)] = argv[i + 1];
}
const known = new Set(['engine', 'rate', 'users', 'window', 'per-frame', 'seconds', 'threads', 'light', 'role', 'port']);
const unknown = Object.keys(args).filter((k) => !known.has(k));
const num = (name, dflt, max) => {
  const n = Number(args[name] ?? dflt);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    console.error(`view-capacity: --${name} must be an integer 1..${max}, got ${JSON.stringify(args[name])}`);
    process.exit(2);
  }
  return n;
};
const rate = num('rate', 100_000, 10_000_000);
const users = num('users', 2000, 100_000);
const windowRows = num('window', 50, 10_000);
const perFrame = num('per-frame', 5, 10_000);
const seconds = num('seconds', 10, 600);
const threads = num('threads', 2, 64);
const engine = args.engine ?? 'native';
const light = args.light ?? 'false';
if (unknown.length > 0 || !['native', 'node'].includes(engine) || !['true', 'false'].includes(light)) {
  console.error(`view-capacity: bad arguments ${JSON.stringify(args)}\n\n${HELP}`);
  process.exit(2);
}
const WARMUP_MS = 2000;
const OPEN_WITHIN_MS = 60_000;
const hardStop = setTimeout(() => {
  console.error('view-capacity: time bound reached');
  process.exit(1);
}, WARMUP_MS + seconds * 1000 + 90_000);
hardStop.unref();
const now = () => performance.timeOrigin + performance.now();
const gitCommit = () => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: fileURLToPath(new URL('.', import.meta.url)), encoding: 'utf8', timeout: 5000 }).trim();
  } catch {
    return 'unknown';
  }
};
const delay = (ms) => new Promise((r) => setTimeout(r, ms));
const within = (p, ms, what) =>
  Promise.race([p, delay(ms).then(() => Promise.reject(new Error(`${what} not done within ${ms} ms`)))]);

// --- Node view users (the child process of --engine node) -------------------------------------
if (args.role === 'node-users') {
  const { ViewUsers } = await import(new URL('../dist/clients/view-users.js', import.meta.url).href);
  const group = new ViewUsers({ url: `ws://127.0.0.1:${Number(args.port)}`, light: light === 'true' });
  const spec = { container: '/C', window: { offset: 0, size: windowRows } };
  const opened = await within(Promise.all(Array.from({ length: users }, (_, i) => group.openView(i, 't', spec))), OPEN_WITHIN_MS, 'opening');
  process.send({ opened: opened.filter((o) => o.ok).length, error: opened.find((o) => !o.ok)?.error });
  await delay(WARMUP_MS);
  group.take();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await delay(seconds * 1000);
  const r = group.take();
  const cpu = process.cpuUsage(c0);
  const el = (performance.now() - t0) / 1000;
  process.send({ result: { updated: r.updated, frames: r.frames, dropped: r.dropped, el, cpu: (cpu.user + cpu.system) / 1e6 / el, usr: cpu.user / 1e6 / el } });
  await group.stop();
  process.exit(0);
}

// --- blaster ---------------------------------------------------------------------------------
const uWS = (await import('uWebSockets.js')).default;
const live = []; // { ws, seqs: number[], closed }
const app = uWS.App().ws('/stream', {
  compression: uWS.DISABLED,
  maxPayloadLength: 1 << 20,
  maxBackpressure: 64 << 20,
  idleTimeout: 0,
  open: (ws) => {
    ws.getUserData().st = { ws, seqs: new Array(windowRows).fill(1), closed: false };
  },
  message: (ws, data) => {
    let m;
    try {
      m = JSON.parse(Buffer.from(data).toString());
    } catch {
      return;
    }
    const st = ws.getUserData().st;
    if (m.type === 'session.login') {
      ws.send(JSON.stringify([{ type: 'session.loggedIn', reqId: m.reqId, sessionId: 's', user: 'x', role: 'trader', tier: 'T1', heartbeatMs: 5000, serverTime: now() }]));
    } else if (m.type === 'session.ping') {
      ws.send(JSON.stringify([{ type: 'session.pong', reqId: m.reqId, ts: m.ts, serverTime: now() }]));
    } else if (m.type === 'view.create') {
      const ts = now();
      const rows = Array.from({ length: windowRows }, (_, k) => ({ index: k, id: k, subject: `/C/${k}`, seq: 1, ts, fields: { price: 1 } }));
      ws.send(JSON.stringify([{ type: 'view.created', reqId: m.reqId, viewId: 1, count: windowRows, rows }]));
      live.push(st);
    }
  },
  close: (ws) => {
    const st = ws.getUserData().st;
    st.closed = true;
    const i = live.indexOf(st);
    if (i >= 0) live.splice(i, 1);
  },
});
const port = await new Promise((resolve, reject) =>
  app.listen('127.0.0.1', 0, (s) => (s ? resolve(uWS.us_socket_local_port(s)) : reject(new Error('cannot listen on 127.0.0.1')))),
);

let cursor = 0; // round robin over (user, row): user = cursor % users, row block advances per lap
let row = 0;
let sent = 0;
let startMs = 0;
let blasting = false;
const ticker = setInterval(() => {
  if (!blasting || live.length === 0) return;
  // at most 5 ms worth per tick, so a blaster that cannot keep up stays responsive
  const due = Math.min(Math.ceil(rate / 200), Math.floor(((now() - startMs) * rate) / 1000) - sent);
  for (let f = 0; f < Math.floor(due / perFrame); f++) {
    if (cursor >= live.length) {
      cursor = 0;
      row = (row + perFrame) % windowRows;
    }
    const st = live[cursor++];
    const ts = now();
    let updated = '';
    for (let k = 0; k < perFrame; k++) {
      const r = (row + k) % windowRows;
      st.seqs[r] += 1;
      updated += `${k ? ',' : ''}{"id":${r},"seq":${st.seqs[r]},"ts":${ts},"fields":{"price":${st.seqs[r]}}}`;
    }
    st.ws.send(`[{"type":"view.rows","reqId":1,"viewId":1,"updated":[${updated}]}]`);
    sent += perFrame;
  }
}, 1);

// --- the users -------------------------------------------------------------------------------
let result;
const blastCpu0 = { cpu: undefined, sent: 0, t: 0 };
const startBlasting = () => {
  startMs = now();
  blasting = true;
};
const markMeasureStart = () => {
  blastCpu0.cpu = process.cpuUsage();
  blastCpu0.sent = sent;
  blastCpu0.t = now();
};
if (engine === 'node') {
  const child = fork(fileURLToPath(import.meta.url), [...argv, '--role', 'node-users', '--port', String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let wake;
  child.on('message', (m) => {
    messages.push(m);
    wake?.();
  });
  child.on('exit', () => wake?.());
  const nextMessage = async (ms) => {
    const deadline = now() + ms;
    while (messages.length === 0 && child.exitCode === null && now() < deadline) {
      await Promise.race([new Promise((r) => (wake = r)), delay(Math.max(1, deadline - now()))]);
    }
    if (messages.length === 0) throw new Error('the node users child ended or went quiet');
    return messages.shift();
  };
  const opened = await nextMessage(OPEN_WITHIN_MS + 5000);
  console.log(`opened ${opened.opened}/${users}${opened.error ? ` (${opened.error})` : ''}`);
  startBlasting();
  await delay(WARMUP_MS);
  markMeasureStart();
  const { result: r } = await nextMessage(seconds * 1000 + 30_000);
  result = { rowsPerSec: Math.round(r.updated / r.el), framesPerSec: Math.round(r.frames / r.el), lost: null, outOfOrder: null, dropped: r.dropped, cpu: r.cpu, usr: r.usr };
} else {
  const binary = fileURLToPath(new URL('../native/target/release/tidewire-loadgen-clients', import.meta.url));
  const mono = Number(process.hrtime.bigint()) / 1e6;
  const child = spawn(binary, [
    '--mode', 'views', '--url', `ws://127.0.0.1:${port}/stream`, '--light', light, '--threads', String(threads),
    '--clock-epoch-ms', now().toFixed(3), '--clock-mono-ms', mono.toFixed(3), '--max-seconds', String(WARMUP_MS / 1000 + seconds + 90),
  ], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map();
  let ready;
  const readyP = new Promise((r) => (ready = r));
  createInterface({ input: child.stdout }).on('line', (text) => {
    const l = JSON.parse(text);
    if (l.event === 'ready') ready();
    else if (l.event === 'error') console.error(`simulator: ${l.message}`);
    else if (l.id !== undefined && waiting.has(l.id)) {
      waiting.get(l.id)(l);
      waiting.delete(l.id);
    }
  });
  let nextId = 1;
  const call = (cmd) => {
    const id = nextId++;
    const p = new Promise((resolve) => waiting.set(id, resolve));
    child.stdin.write(`${JSON.stringify({ ...cmd, id })}\n`);
    return p;
  };
  await within(readyP, 10_000, 'simulator start');
  const request = JSON.stringify({ type: 'view.create', reqId: 0, container: '/C', window: { offset: 0, size: windowRows } });
  const opened = await within(Promise.all(Array.from({ length: users }, (_, i) => call({ cmd: 'openView', index: i, token: 't', request }))), OPEN_WITHIN_MS, 'opening');
  const failed = opened.find((o) => !o.ok);
  console.log(`opened ${opened.filter((o) => o.ok).length}/${users}${failed ? ` (${failed.error})` : ''}`);
  startBlasting();
  await delay(WARMUP_MS);
  const a = await within(call({ cmd: 'take' }), 10_000, 'take');
  markMeasureStart();
  const t0 = now();
  await delay(seconds * 1000);
  const b = await within(call({ cmd: 'take' }), 10_000, 'take');
  const el = (now() - t0) / 1000;
  child.stdin.end('{"cmd":"stop"}\n');
  result = {
    rowsPerSec: Math.round(b.updated / el), framesPerSec: Math.round(b.frames / el), lost: b.lost, outOfOrder: b.outOfOrder, dropped: b.dropped,
    cpu: (b.cpuUserMicros + b.cpuSystemMicros - a.cpuUserMicros - a.cpuSystemMicros) / 1e6 / el,
    usr: (b.cpuUserMicros - a.cpuUserMicros) / 1e6 / el,
  };
}
blasting = false;
clearInterval(ticker);
const blastEl = (now() - blastCpu0.t) / 1000;
const blastCpu = process.cpuUsage(blastCpu0.cpu);
console.log(JSON.stringify({
  engine, targetRowsPerSec: rate, users, window: windowRows, perFrame, light: light === 'true', threads: engine === 'native' ? threads : 1,
  rowsPerSec: result.rowsPerSec, framesPerSec: result.framesPerSec, lost: result.lost, outOfOrder: result.outOfOrder, dropped: result.dropped,
  usersCpuPctOfOneCore: Math.round(result.cpu * 1000) / 10, usersUserCpuPct: Math.round(result.usr * 1000) / 10,
  rowsPerCoreSecond: result.cpu > 0 ? Math.round(result.rowsPerSec / result.cpu) : null,
  blasterSentRowsPerSec: Math.round((sent - blastCpu0.sent) / blastEl),
  blasterCpuPctOfOneCore: Math.round(((blastCpu.user + blastCpu.system) / 1e6 / blastEl) * 1000) / 10,
  loadAvg1: Math.round(loadavg()[0] * 100) / 100,
  commit: gitCommit(), machine: { cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version },
}, null, 2));
app.close?.();
process.exit(0);
