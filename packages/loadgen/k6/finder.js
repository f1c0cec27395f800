// k6 product-finder load script (Refiner response time): users arrive at RATE per second
// (constant-arrival-rate), each logs in, sends one unique view.create on the finder container
// published by `tidewire-loadgen finder-source` (a number band + a category, ~RESULT rows, sorted by
// name, window 50) and records view.create -> view.created in the Trend tidewire_view_response_ms
// (k6's clock has ms resolution; `tidewire-loadgen run finder-response` measures µs). Each user
// keeps its view HOLD_SECONDS, then leaves.
//   npx tidewire-loadgen finder-source --size 10000 --seconds 300 &
//   k6 run -e URL=ws://127.0.0.1:8080 -e SIZE=10000 -e RATE=8.3 -e DURATION=60 packages/loadgen/k6/finder.js
// TOKEN (a session token of the trader, from a first login) avoids a password hash per user. On a
// server with entitlements, log in as a bench account of `tidewire-loadgen users-config`
// (-e USER_NAME=bench-t1 -e PASSWORD=bench123): the default trader rules do not cover /BENCH/**.
// The filter formula is finderFilter() of src/presets/view-presets.ts (k6 cannot import it): keep in step.
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import { clearTimeout, setTimeout } from 'k6/timers';
import { WebSocket } from 'k6/websockets';

const URL = __ENV.URL || 'ws://127.0.0.1:8080';
const SIZE = Number(__ENV.SIZE || 10000);
const RESULT = Number(__ENV.RESULT || Math.max(1, Math.round(SIZE / 100)));
const RATE = Number(__ENV.RATE || 8.3);
const DURATION = Number(__ENV.DURATION || 60);
const HOLD_SECONDS = Number(__ENV.HOLD_SECONDS || 5);
const WINDOW = Number(__ENV.WINDOW || 50);
const NUM_RANGE = 1000000;
const CATEGORIES = 10;

const responseTime = new Trend('tidewire_view_response_ms', true);
const refused = new Counter('tidewire_view_refused');

export const options = {
  scenarios: {
    finder: {
      executor: 'constant-arrival-rate',
      // k6 rates are integers per timeUnit: RATE per second as RATE*10 per 10 s
      rate: Math.max(1, Math.round(RATE * 10)),
      timeUnit: '10s',
      duration: `${DURATION}s`,
      preAllocatedVUs: Math.max(10, Math.ceil(RATE * (HOLD_SECONDS + 2))),
      maxVUs: Math.max(50, Math.ceil(RATE * (HOLD_SECONDS + 10))),
    },
  },
  thresholds: {
    checks: ['rate>0.99'],
    tidewire_view_refused: ['count==0'],
    tidewire_view_response_ms: ['p(99)<500'],
  },
};

/** finderFilter(user, fraction) of src/presets/view-presets.ts. */
function finderFilter(user, fraction) {
  const oneCategory = fraction <= 1 / CATEGORIES;
  const textPart = oneCategory ? `cat = "C${user % CATEGORIES}"` : 'cat >= "C"';
  const width = Math.round(NUM_RANGE * (oneCategory ? fraction * CATEGORIES : fraction));
  if (width >= NUM_RANGE) return `num >= ${-1 - user} and ${textPart}`;
  const slot = oneCategory ? Math.floor(user / CATEGORIES) : user;
  const starts = NUM_RANGE - width;
  const lo = (slot * 7919) % starts;
  return `num >= ${lo} and num < ${lo + width} and ${textPart}`;
}

export default function () {
  // unique per iteration and per run (a second run on the same server gets new filters too)
  const user = exec.scenario.iterationInTest + (Number(__ENV.USER_OFFSET || 0));
  const ws = new WebSocket(`${URL}/stream`);
  let sentAt = 0;
  let created = false;
  ws.onopen = () => {
    const login = __ENV.TOKEN ? { token: __ENV.TOKEN } : { user: __ENV.USER_NAME || 'alice', password: __ENV.PASSWORD || 'alice123' };
    ws.send(JSON.stringify({ type: 'session.login', reqId: 1, ...login }));
  };
  ws.onmessage = (event) => {
    const now = Date.now();
    for (const m of JSON.parse(event.data)) {
      if (m.type === 'session.loggedIn') {
        sentAt = Date.now();
        ws.send(JSON.stringify({
          type: 'view.create', reqId: 2, container: `/BENCH/FINDER/${SIZE}`, filter: finderFilter(user, RESULT / SIZE),
          sort: [{ field: 'name', dir: 'asc' }], window: { offset: 0, size: WINDOW },
        }));
      } else if (m.type === 'view.created' && m.reqId === 2) {
        created = true;
        responseTime.add(now - sentAt);
        setTimeout(() => ws.close(), HOLD_SECONDS * 1000);
      } else if (m.type === 'error') {
        refused.add(1);
        ws.close();
      }
    }
  };
  // bounded: a user that got no answer leaves after 30 s
  const limit = setTimeout(() => ws.close(), (HOLD_SECONDS + 30) * 1000);
  ws.onclose = () => {
    clearTimeout(limit);
    check(null, { 'view created': () => created });
  };
}
