// k6 smoke test of the streaming protocol: a few users log in on /stream, subscribe to records a
// publisher is updating under /BENCH/k6, and check that acknowledgements, images and updates
// arrive; end-to-end latency (the update's `ts` to receipt, ms, k6's ms clock) goes into a Trend.
// run-smoke.mjs starts a server and the publisher and runs this; by hand:
//   k6 run -e URL=ws://127.0.0.1:8080 -e PREFIX=/BENCH/k6 -e SUBJECTS=50 packages/loadgen/k6/smoke.js
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { setTimeout } from 'k6/timers';
import { WebSocket } from 'k6/websockets';

const URL = __ENV.URL || 'ws://127.0.0.1:8080';
const PREFIX = __ENV.PREFIX || '/BENCH/k6';
const SUBJECTS = Number(__ENV.SUBJECTS || 50);
const SUBS = Number(__ENV.SUBS || 5);
const SECONDS = Number(__ENV.SECONDS || 8);

const e2eLatency = new Trend('tidewire_e2e_latency_ms', true);
const updates = new Counter('tidewire_updates');
const images = new Counter('tidewire_images');
const gaps = new Counter('tidewire_seq_gaps');

export const options = {
  scenarios: {
    smoke: { executor: 'per-vu-iterations', vus: Number(__ENV.USERS || 3), iterations: 1, maxDuration: `${SECONDS + 20}s` },
  },
  thresholds: {
    checks: ['rate==1'],
    tidewire_updates: ['count>0'],
    tidewire_images: ['count>0'],
    tidewire_seq_gaps: ['count==0'],
    // generous: k6 shares the machine with the server in CI
    tidewire_e2e_latency_ms: ['p(95)<250', 'avg<100'],
  },
};

export default function () {
  const first = ((__VU - 1) * SUBS) % SUBJECTS;
  const subjects = Array.from({ length: SUBS }, (_, j) => `${PREFIX}/${(first + j) % SUBJECTS}`);
  const ws = new WebSocket(`${URL}/stream`);
  const lastSeq = {};
  let loggedIn = false;
  let subscribed = false;
  let gotImages = 0;
  let gotUpdates = 0;

  ws.onopen = () => {
    ws.send(JSON.stringify({ type: 'session.login', reqId: 1, user: __ENV.USER_NAME || 'alice', password: __ENV.PASSWORD || 'alice123' }));
  };
  ws.onmessage = (event) => {
    const now = Date.now();
    for (const m of JSON.parse(event.data)) {
      if (m.type === 'session.loggedIn') {
        loggedIn = true;
        ws.send(JSON.stringify({ type: 'record.subscribe', reqId: 2, subjects }));
      } else if (m.type === 'record.subscribed') {
        subscribed = m.records.length === SUBS;
      } else if (m.type === 'record.image') {
        gotImages++;
        images.add(1);
        lastSeq[m.id] = m.seq;
      } else if (m.type === 'record.update') {
        gotUpdates++;
        updates.add(1);
        e2eLatency.add(Math.max(0, now - m.ts));
        if (lastSeq[m.id] !== undefined && m.seq !== lastSeq[m.id] + 1 && !m.conflated) gaps.add(1);
        lastSeq[m.id] = m.seq;
      } else if (m.type === 'error') {
        console.error(`server error ${m.code}: ${m.message}`);
      }
    }
  };
  ws.onerror = (e) => console.error(`websocket error: ${e.error}`);
  setTimeout(() => {
    check(null, {
      'logged in': () => loggedIn,
      'subscription acknowledged': () => subscribed,
      'an image per record': () => gotImages >= SUBS,
      'updates arrived': () => gotUpdates > 0,
    });
    ws.close();
  }, SECONDS * 1000);
}
