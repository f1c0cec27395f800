// A source process for the failover tests and benchmark: logs in to /source, registers its
// patterns with a priority, and while active publishes an image of each subject, then a delta of
// each every `tickMs`. Prints one JSON line per event on stdout ({"event":"standby"|"active"}).
// Usage: node failover-source.mjs <ws-url> <name> <priority> <tickMs> <subject>...
import WebSocket from 'ws';

const [url, name, priority, tickMs, ...subjects] = process.argv.slice(2);
const patterns = ['/FO/**'];
const ws = new WebSocket(url);
let n = 0;
let timer;

function say(event, extra = {}) {
  process.stdout.write(`${JSON.stringify({ event, name, ...extra })}\n`);
}

function publish(image) {
  n++;
  const ts = Date.now();
  ws.send(JSON.stringify(subjects.map((subject) => ({ type: 'record.publish', subject, ts, ...(image ? { image: true } : {}), fields: { bid: n, src: name } }))));
}

function activate() {
  if (timer !== undefined) return;
  publish(true);
  say('active');
  timer = setInterval(() => publish(false), Number(tickMs));
}

ws.on('open', () => ws.send(JSON.stringify({ type: 'session.login', reqId: 1, user: 'feed', password: 'feed123' })));
ws.on('message', (data) => {
  for (const m of JSON.parse(data.toString('utf8'))) {
    if (m.type === 'session.loggedIn') ws.send(JSON.stringify({ type: 'source.register', reqId: 2, patterns, priority: Number(priority) }));
    else if (m.type === 'source.registered') m.active ? activate() : say('standby');
    else if (m.type === 'source.activate') activate();
    else if (m.type === 'error') say('error', { message: m.message });
  }
});
ws.on('close', () => {
  clearInterval(timer);
  process.exit(0);
});
