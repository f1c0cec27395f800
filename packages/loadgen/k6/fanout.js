// k6 fan-out load script: ramps streaming users (VUs), each subscribed to SUBS records of a
// feed published under PREFIX by `tidewire-loadgen source`, and records end-to-end latency in a
// Trend (k6's clock has ms resolution; the Rust simulator of `tidewire-loadgen` measures µs).
//   npx tidewire-loadgen source --prefix /BENCH/k6 --subjects 1000 --rate 0.5 --seconds 200 &
//   k6 run -e URL=ws://127.0.0.1:8080 -e PREFIX=/BENCH/k6 -e SUBJECTS=1000 -e SUBS=2 -e USERS=500 packages/loadgen/k6/fanout.js
// TOKEN (a session token of the trader, e.g. from a first login) avoids a password hash per user.
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import { setInterval, clearInterval, setTimeout } from 'k6/timers';
import { WebSocket } from 'k6/websockets';

const URL = __ENV.URL || 'ws://127.0.0.1:8080';
const PREFIX = __ENV.PREFIX || '/BENCH/k6';
const SUBJECTS = Number(__ENV.SUBJECTS || 1000);
const SUBS = Number(__ENV.SUBS || 2);
const USERS = Number(__ENV.USERS || 200);
const HOLD_SECONDS = Number(__ENV.HOLD_SECONDS || 60);
const RAMP_SECONDS = Number(__ENV.RAMP_SECONDS || 30);

const e2eLatency = new Trend('tidewire_e2e_latency_ms', true);
const updates = new Counter('tidewire_updates');
const gaps = new Counter('tidewire_seq_gaps');

export const options = {
  scenarios: {
    fanout: {
      executor: 'ramping-vus',
      startVUs: 0,
      stages: [
        { duration: `${RAMP_SECONDS}s`, target: USERS },
        { duration: `${HOLD_SECONDS}s`, target: USERS },
      ],
      gracefulRampDown: '5s',
    },
  },
  thresholds: {
    checks: ['rate>0.99'],
    tidewire_seq_gaps: ['count==0'],
    tidewire_e2e_latency_ms: ['avg<50', 'p(99)<500'],
  },
};

export default function () {
  const first = ((__VU - 1) * SUBS) % SUBJECTS;
  const subjects = Array.from({ length: SUBS }, (_, j) => `${PREFIX}/${(first + j) % SUBJECTS}`);
  const ws = new WebSocket(`${URL}/stream`);
  const lastSeq = {};
  let ready = false;
  let heartbeat;
  ws.onopen = () => {
    const login = __ENV.TOKEN ? { token: __ENV.TOKEN } : { user: __ENV.USER_NAME || 'alice', password: __ENV.PASSWORD || 'alice123' };
    ws.send(JSON.stringify({ type: 'session.login', reqId: 1, ...login }));
  };
  ws.onmessage = (event) => {
    const now = Date.now();
    for (const m of JSON.parse(event.data)) {
      if (m.type === 'session.loggedIn') {
        ws.send(JSON.stringify({ type: 'record.subscribe', reqId: 2, subjects }));
        let reqId = 3;
        heartbeat = setInterval(() => ws.send(JSON.stringify({ type: 'session.ping', reqId: reqId++, ts: Date.now() })), m.heartbeatMs);
      } else if (m.type === 'record.subscribed') {
        ready = true;
      } else if (m.type === 'record.image') {
        lastSeq[m.id] = m.seq;
      } else if (m.type === 'record.update') {
        updates.add(1);
        e2eLatency.add(Math.max(0, now - m.ts));
        if (lastSeq[m.id] !== undefined && m.seq !== lastSeq[m.id] + 1 && !m.conflated) gaps.add(1);
        lastSeq[m.id] = m.seq;
      }
    }
  };
  // each VU holds its connection until the end of the ramp + hold, then closes it
  const endMs = exec.scenario.startTime + (RAMP_SECONDS + HOLD_SECONDS) * 1000;
  setTimeout(() => {
    check(null, { 'subscribed': () => ready });
    if (heartbeat) clearInterval(heartbeat);
    ws.close();
  }, Math.max(1000, endMs - Date.now()));
}
