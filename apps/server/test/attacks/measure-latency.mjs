#!/usr/bin/env node
/**
 * Measurement (not a unit test): victim latency with and without each attacker of the attack
 * suite. A server (built: `npx tsc -b apps/server`) runs in this process with the default rules;
 * a source publishes /FX/VICTIM every 10 ms with its origin timestamp; 20 victim clients measure
 * origin -> receipt. For each attacker: a baseline window, then the same window with the attacker
 * running in a child process (so its CPU is not this process's), `rounds` times alternating,
 * samples pooled per condition (many short windows: load from elsewhere on the machine hits both
 * conditions alike). Prints one markdown table row
 * per attacker: pooled p50 / p99 without and with and their p99 ratio; the median over rounds of
 * each window's p99 and of each round's paired ratio (attacked p99 / the baseline p99 just
 * before it; round-stats.mjs), which one load spike elsewhere on the machine does not decide
 * (criterion: within 20%); and this process's CPU per second (server, victims and feed: the
 * attack's cost on the server side).
 *
 * Attacker priority (`--nice`): the attacker process runs on the same 2 cores as the server and
 * the victims, so at equal priority its own CPU (a client loop the server never sees) moves the
 * victims as much as the server's work for it: the controls (the same client loop into a sink in
 * the attacker's own process) showed it. The criterion is about the server isolating users
 * from an attacker, who in production runs on another machine. `idle` starts the attacker child
 * under `chrt --idle 0 nice -n 19` (SCHED_IDLE, every thread of it from exec): it gets only CPU
 * that the server and the victims leave and is preempted as soon as one of them wakes, while the
 * server's work for it (this process, nice 0, like the victims) still competes at full priority.
 * `19` is `nice -n 19` alone (on this kernel's EEVDF scheduler a waking nice-0 thread may still
 * wait for a running nice-19 one), `0` the attacker at equal priority. Each level listed gets its
 * own window per round after the same baseline (their order alternating per round) and its own
 * row; the default `idle,0` reports the criterion (the attacker demoted) and the whole machine's
 * view (equal priority) side by side. The child is forked in this process's session, so it shares
 * its autogroup and nice applies between them (a child in another session would get a fair
 * autogroup share whatever its nice). MEASURE_LIMITS (JSON) overrides `limits.*` for an A/B.
 *
 *   node apps/server/test/attacks/measure-latency.mjs [seconds per window, default 2] [rounds, default 8] [--nice idle,0] [attacker ...]
 */

import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { getPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { summarizeRounds } from './round-stats.mjs';

const here = fileURLToPath(import.meta.url);
const now = () => performance.timeOrigin + performance.now();
const wait = (ms) => new Promise((r) => setTimeout(r, ms));

/** Attackers: each runs until killed, reconnecting whenever the server cuts it. */
const ATTACKERS = {
  'subscription flood': (url) => loop(url, 'bob', (ws) => {
    let i = 0;
    const t = setInterval(() => { for (let k = 0; k < 200; k++) ws.send(JSON.stringify({ type: 'record.subscribe', reqId: ++i % 1e9, subjects: [`/FX/F${i}`] })); }, 5);
    return () => clearInterval(t);
  }),
  // control, not an attack on the server: the subscription flood's client loop against a sink in
  // the attacker's own process that answers like the server does (login, RATE_LIMITED past a
  // 400-frame burst, close 4002 after 100 errors, reconnects held about 1 s by the throttle), so
  // it costs the machine what the flood costs the attacker (plus the sink's reading), and the
  // server nothing
  'subscription flood control (the same loop into the attacker\'s own sink)': () => {
    const sink = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    let lastClose = 0;
    sink.on('connection', (c) => {
      let frames = 0;
      let loggedIn = false;
      c.on('message', (data) => {
        const m = JSON.parse(data.toString());
        if (!loggedIn) {
          loggedIn = true;
          // the reconnect throttle holds a reconnect until about 1 s after the last abusive close
          setTimeout(() => c.send(JSON.stringify([{ type: 'session.loggedIn', reqId: m.reqId, token: 'sink' }])), Math.max(0, lastClose + 1000 - Date.now()));
          return;
        }
        if (++frames <= 400) return;
        c.send(JSON.stringify([{ type: 'error', reqId: m.reqId, code: 'RATE_LIMITED', message: 'more than 200 frames per second (limits.requestsPerSec)' }]));
        if (frames > 500 && c.readyState === WebSocket.OPEN) {
          lastClose = Date.now();
          c.close(4002, 'more than 100 errors on one connection');
        }
      });
      c.on('error', () => {});
    });
    sink.on('listening', () => ATTACKERS['subscription flood'](`ws://127.0.0.1:${sink.address().port}/stream`));
  },
  // within every per-request limit: 10 requests of 1,000 subjects fill the session's 10,000
  // (limits.maxSubscriptionsPerSession), 10 more unsubscribe them, over and over, one frame per
  // 5 ms (the request rate, 200/s): 200,000 subject subscribes or unsubscribes a second that the
  // limits allow; the frames are made once (reqId 1..20 repeat)
  'subscription churn (10,000 subjects, 1,000 per request)': (url) => {
    const frames = Array.from({ length: 20 }, (_, k) => JSON.stringify({
      type: k < 10 ? 'record.subscribe' : 'record.unsubscribe', reqId: k + 1,
      subjects: Array.from({ length: 1000 }, (_, j) => `/FX/C${(k % 10) * 1000 + j}`),
    }));
    loop(url, 'bob', (ws) => {
      let i = 0;
      const t = setInterval(() => { ws.send(frames[i++ % 20]); sent++; }, 5);
      return () => clearInterval(t);
    });
  },
  'oversized frames': (url) => loop(url, 'bob', (ws) => { ws.send('x'.repeat(100_000)); return () => {}; }),
  'deeply nested filter': (url) => loop(url, 'bob', (ws) => {
    let i = 0;
    const filter = `${'('.repeat(40)}bid > 1${')'.repeat(40)}`;
    const t = setInterval(() => ws.send(JSON.stringify({ type: 'view.create', reqId: ++i, container: '/CONTAINER/VICTIM', filter, window: { offset: 0, size: 10 } })), 10);
    return () => clearInterval(t);
  }),
  'forged tokens': (url) => loop(url, null, (ws) => {
    let i = 0;
    const t = setInterval(() => ws.send(JSON.stringify({ type: 'session.login', reqId: ++i, token: `eyJ1IjoiYWRtaW4ifQ.${'A'.repeat(43)}` })), 5);
    return () => clearInterval(t);
  }),
  'password guessing (20 connections)': (url) => {
    for (let c = 0; c < 20; c++) {
      loop(url, null, (ws) => {
        let i = 0;
        // one login at a time per connection: the next guess when the previous one was answered
        const guess = () => ws.send(JSON.stringify({ type: 'session.login', reqId: ++i, user: 'alice', password: `guess${i}` }));
        ws.on('message', guess);
        guess();
        return () => ws.off('message', guess);
      });
    }
  },
  'blotter snooping': (url) => loop(url, 'bob', (ws) => {
    let i = 0;
    const t = setInterval(() => ws.send(JSON.stringify({ type: 'record.subscribe', reqId: ++i, subjects: ['/BLOTTER/alice', '/TRADE/alice/1'] })), 10);
    return () => clearInterval(t);
  }),
  'slowloris (200 partial frames)': (url) => {
    const { port } = new URL(url);
    const open = () => {
      const s = connect(Number(port), '127.0.0.1', () => {
        s.write('GET /stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
        s.write(Buffer.from([0x81, 0xfe, 0x03, 0xe8, 1, 2, 3, 4]));
        const t = setInterval(() => s.write(Buffer.from([0x20])), 100);
        s.on('close', () => { clearInterval(t); setTimeout(open, 10); });
      });
      s.on('error', () => {});
    };
    for (let i = 0; i < 200; i++) open();
  },
  // control, not an attack on the server: the same 200 sockets and drips into a sink in the
  // attacker's own process, so it costs the machine what slowloris costs the attacker, and the
  // server nothing (what is left of the victim's p99 change is the shared cores, not the server)
  'slowloris control (200 partial frames into the attacker\'s own sink)': () => {
    const sink = createServer((c) => { c.on('data', () => {}); c.on('error', () => {}); });
    sink.listen(0, '127.0.0.1', () => {
      const { port } = sink.address();
      for (let i = 0; i < 200; i++) {
        const s = connect(port, '127.0.0.1', () => {
          s.write('GET /stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
          s.write(Buffer.from([0x81, 0xfe, 0x03, 0xe8, 1, 2, 3, 4]));
          const t = setInterval(() => s.write(Buffer.from([0x20])), 100);
          s.on('close', () => clearInterval(t));
        });
        s.on('error', () => {});
      }
    });
  },
  'never-reading client': (url) => loop(url, 'bob', (ws) => {
    ws.send(JSON.stringify({ type: 'record.subscribe', reqId: 1, subjects: Array.from({ length: 50 }, (_, i) => `/FX/BULK${i}`) }));
    ws._socket.pause();
    return () => {};
  }),
};

let token;
/** Frames the churn attacker sent (reported to the parent with its CPU). */
let sent = 0;

/**
 * Connects, logs in (unless user is null: the first time with the password, then with the
 * session token, as a real client reconnects), runs `attack`, and starts over when the server
 * closes the socket.
 */
function loop(url, user, attack) {
  const ws = new WebSocket(url);
  let stop = () => {};
  const login = () => ws.send(JSON.stringify(token ? { type: 'session.login', reqId: 0, token } : { type: 'session.login', reqId: 0, user, password: `${user}123` }));
  let loggedIn = false;
  ws.on('open', () => {
    if (user === null) stop = attack(ws);
    else login();
  });
  ws.on('message', (data) => {
    if (user === null || loggedIn) return;
    const text = data.toString();
    // a password login over the address's rate is answered RATE_LIMITED once it may log in again
    if (text.includes('"RATE_LIMITED"')) login();
    if (!text.includes('"session.loggedIn"')) return;
    loggedIn = true;
    token = JSON.parse(text).find((m) => m.type === 'session.loggedIn').token;
    stop = attack(ws);
  });
  ws.on('error', () => {});
  ws.on('close', () => { stop(); setTimeout(() => loop(url, user, attack), 20); });
}

/** Child process: run one attacker against `url` until killed. */
if (process.argv[2] === '--attacker') {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  ATTACKERS[process.argv[3]](process.argv[4]);
  // the priority it really runs at (nice of this thread; all threads inherit it from `nice` at exec)
  const policy = /^policy\s*:\s*(\d+)/m.exec(readFileSync('/proc/self/sched', 'utf8'))?.[1];
  process.send({ ready: true, nice: getPriority(), policy: policy === '5' ? 'idle' : 'normal' });
  // 'stop': report this process's CPU per second since it started attacking (it competes for the same cores)
  process.on('message', () => {
    const cpu = process.cpuUsage(cpu0);
    const secs = (performance.now() - started) / 1000;
    process.send({ cpuMsPerSec: (cpu.user + cpu.system) / 1000 / secs, framesPerSec: sent / secs }, () => process.exit(0));
  });
} else {
  await main();
}

async function main() {
  const seconds = Number(process.argv[2] ?? 2);
  const rounds = Number(process.argv[3] ?? 8);
  const only = process.argv.slice(4);
  let levels = ['idle', '0'];
  const niceAt = only.findIndex((a) => a === '--nice' || a.startsWith('--nice='));
  if (niceAt >= 0) {
    const [arg] = only.splice(niceAt, 1);
    const value = arg.startsWith('--nice=') ? arg.slice('--nice='.length) : only.splice(niceAt, 1)[0];
    levels = [...new Set(String(value ?? '').split(','))];
  }
  const unknown = only.filter((a) => !(a in ATTACKERS));
  if (!(seconds > 0 && seconds <= 60) || !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 50)
    || levels.some((l) => !['0', '19', 'idle'].includes(l)) || unknown.length > 0) {
    console.error('usage: measure-latency.mjs [seconds per window, 0 < s <= 60] [rounds, 1..50] [--nice LEVELS: comma-separated 0, 19, idle; default idle,0] [attacker ...]');
    if (unknown.length > 0) console.error(`unknown attacker(s): ${unknown.join(', ')}; known: ${Object.keys(ATTACKERS).join(', ')}`);
    process.exit(2);
  }
  const { loadConfig } = await import('../../dist/config.js');
  const { startServer } = await import('../../dist/server.js');
  const { setLogSink } = await import('../../dist/log.js');
  setLogSink(() => {});
  const config = loadConfig({ overrides: {
    server: { port: 0, workers: 2 }, demo: { enabled: false }, batching: { burstMaxMs: 0 },
    outbox: { slowConsumerMs: 1000 },
    // MEASURE_LIMITS='{"subjectsPerToken":0}': other limits for an A/B of one limit
    limits: { maxClientFrameBytes: 65536, ...JSON.parse(process.env.MEASURE_LIMITS ?? '{}') },
  } });
  const server = await startServer(config);
  const wsBase = server.url.replace(/^http/, 'ws');
  const source = await open(`${wsBase}/source`, 'feed');
  source.send(JSON.stringify({ type: 'container.publish', subject: '/CONTAINER/VICTIM', ops: [{ op: 'add', subjects: ['/FX/VICTIM'] }] }));
  const bulk = Array.from({ length: 50 }, (_, i) => ({ type: 'record.publish', subject: `/FX/BULK${i}`, image: true, fields: { pad: 'x'.repeat(2000) } }));
  source.send(JSON.stringify(bulk));
  let n = 0;
  const feed = setInterval(() => {
    n++;
    source.send(JSON.stringify([{ type: 'record.publish', subject: '/FX/VICTIM', ts: now(), fields: { bid: n } },
      ...bulk.map((b) => ({ ...b, image: false, fields: { pad: `${b.fields.pad}${n}` } }))]));
  }, 10);
  const latencies = [];
  const victims = await Promise.all(Array.from({ length: 20 }, () => open(`${wsBase}/stream`, 'alice')));
  for (const v of victims) {
    v.on('message', (data) => {
      const t = now();
      for (const m of JSON.parse(data.toString())) if ((m.type === 'record.update' || m.type === 'record.image') && m.ts) latencies.push(t - m.ts);
    });
    v.send(JSON.stringify({ type: 'record.subscribe', reqId: 1, subjects: ['/FX/VICTIM'] }));
  }
  // samples of one window, and this process's CPU (server + victims + feed) per second in it
  const window = async () => {
    await wait(500); // settle
    latencies.length = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await wait(seconds * 1000);
    const cpu = process.cpuUsage(cpu0);
    return { samples: latencies.splice(0), cpuMsPerSec: (cpu.user + cpu.system) / 1000 / ((performance.now() - t0) / 1000) };
  };
  if (process.env.MEASURE_LIMITS) console.log(`limits overridden by MEASURE_LIMITS: ${process.env.MEASURE_LIMITS}`);
  console.log(`victims: 20 clients on /FX/VICTIM (100 updates/s, plus 50 x 2 KB records/s on /FX/BULK*), ${rounds} x ${seconds} s windows per condition, alternating, workers: 2; attacker priority: ${levels.map(levelName).join(', ')} (server and victims: this process, nice ${getPriority()}); load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
  console.log('| attacker | attacker priority | without p50 / p99 (ms) | with p50 / p99 (ms) | p99 ratio (pooled) | median p99 per round without / with (ms) | median paired p99 ratio | within 20% (median) | server CPU ms/s without -> with | attacker CPU ms/s |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const name of Object.keys(ATTACKERS)) {
    if (only.length > 0 && !only.includes(name)) continue;
    // alternating windows, samples pooled per condition: load from elsewhere on the machine
    // hits both conditions alike instead of deciding the comparison; one baseline per round,
    // then one window per priority level (their order alternating per round), each paired with
    // that baseline; round-stats.mjs pools them and takes medians over rounds
    const per = new Map(levels.map((l) => [l, { rounds: [], baseCpu: 0, attackedCpu: 0, attackerCpu: 0, seen: new Set() }]));
    for (let r = 0; r < rounds; r++) {
      const b = await window();
      const order = r % 2 === 0 ? levels : [...levels].reverse();
      for (const level of order) {
        const p = per.get(level);
        p.baseCpu += b.cpuMsPerSec / rounds;
        const child = fork(here, ['--attacker', name, `${wsBase}/stream`], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], ...spawnAt(level) });
        // the window starts once the attacker runs (node's start-up takes seconds on a loaded machine)
        const ready = await new Promise((res, rej) => {
          child.once('message', res);
          // `nice` or `chrt` missing: say so instead of waiting forever
          child.once('error', (err) => rej(new Error(`attacker at ${levelName(level)} did not start: ${err.message}`)));
        });
        p.seen.add(`nice ${ready.nice}${ready.policy === 'idle' ? ' SCHED_IDLE' : ''}`);
        const w = await window();
        p.rounds.push({ base: b.samples, attacked: w.samples });
        p.attackedCpu += w.cpuMsPerSec / rounds;
        const report = new Promise((res) => child.once('message', (m) => res(m.cpuMsPerSec)));
        const exited = new Promise((res) => child.once('exit', res));
        child.send('stop');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        p.attackerCpu += (await Promise.race([report, exited.then(() => 0)])) / rounds;
        await exited;
        clearTimeout(timer);
      }
    }
    for (const [level, p] of per) {
      const { pooled: { base, attacked, p99Ratio }, median } = summarizeRounds(p.rounds);
      // the priority the child reported, so a missing `nice` / `chrt` cannot pass unnoticed
      const seen = [...p.seen].join(' / ');
      console.log(`| ${name} | ${levelName(level)}${seen === levelName(level) ? '' : ` (ran at ${seen})`} | ${base.p50.toFixed(2)} / ${base.p99.toFixed(2)} | ${attacked.p50.toFixed(2)} / ${attacked.p99.toFixed(2)} | ${p99Ratio.toFixed(2)} | ${median.baseP99.toFixed(2)} / ${median.attackedP99.toFixed(2)} | ${median.pairedRatio.toFixed(2)} | ${median.pairedRatio <= 1.2 ? 'yes' : 'no'} (${attacked.count} samples, ${rounds} rounds) | ${p.baseCpu.toFixed(0)} -> ${p.attackedCpu.toFixed(0)} | ${p.attackerCpu.toFixed(0)} |`);
    }
  }
  clearInterval(feed);
  for (const v of victims) v.terminate();
  source.terminate();
  await server.close();
  process.exit(0);
}

/** How a priority level is shown: '0' and '19' are nice values, 'idle' SCHED_IDLE at nice 19. */
function levelName(level) {
  return level === 'idle' ? 'nice 19 SCHED_IDLE' : `nice ${level}`;
}

/**
 * fork() options that start the attacker child at `level`: through `nice -n 19` (and `chrt --idle
 * 0` for idle), which then exec node, so every thread of the child runs at that priority from the
 * start and the IPC channel (an inherited fd) still works. Level 0 forks node directly.
 */
function spawnAt(level) {
  if (level === '0') return {};
  const nice = ['-n', '19', process.execPath, ...process.execArgv];
  if (level === '19') return { execPath: 'nice', execArgv: nice };
  return { execPath: 'chrt', execArgv: ['--idle', '0', 'nice', ...nice] };
}

/**
 * Opens a WebSocket and logs in as `user` (password `<user>123`); resolves once logged in. The
 * feed and the 20 victims log in at once from one address, past `limits.loginsPerSecPerIp`'s
 * burst: a RATE_LIMITED login is sent again (the server answers it once the address may log in
 * again), at most 20 times, then the run fails.
 */
function open(url, user) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const login = () => ws.send(JSON.stringify({ type: 'session.login', reqId: 0, user, password: `${user}123` }));
    let retries = 0;
    ws.once('open', login);
    const onMessage = (data) => {
      const text = data.toString();
      if (text.includes('"session.loggedIn"')) {
        ws.off('message', onMessage);
        resolve(ws);
      } else if (text.includes('"RATE_LIMITED"')) {
        if (++retries > 20) reject(new Error(`login of ${user} refused ${retries} times: ${text}`));
        else login();
      }
    };
    ws.on('message', onMessage);
    ws.once('error', reject);
  });
}
