import WebSocket from 'ws';
const url = process.argv[2];
function client(name, subscribe) {
  const ws = new WebSocket(url); const t0 = Date.now(); let n = 0;
  ws.on('open', () => ws.send(JSON.stringify({ type: 'session.login', reqId: 1, user: 'alice', password: 'alice123' })));
  ws.on('message', (d) => { n++; const m = JSON.parse(d); if (m[0].type === 'session.loggedIn' && subscribe) ws.send(JSON.stringify({ type: 'record.subscribe', reqId: 2, subjects: ['/FX/EURUSD'] })); });
  ws.on('close', (c) => console.log(name, 'closed', c, 'after', Date.now() - t0, 'ms, msgs', n));
  return ws;
}
const a = client('silent', false); const b = client('receiving', true);
setTimeout(() => { console.log('receiving still open:', b.readyState === 1); process.exit(0); }, 16000);
