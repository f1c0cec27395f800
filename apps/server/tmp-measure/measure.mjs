// usage: node measure.mjs <ws-url> <clients> <subsPerClient> <seconds> <productCount>
import WebSocket from 'ws';
import { ProductCatalog } from '../dist/feeds/products.js';
import { FxBook } from '../dist/feeds/fx.js';
const [url, nClients, nSubs, secs, productCount] = [process.argv[2], +process.argv[3], +process.argv[4], +process.argv[5], +process.argv[6]];
const cat = new ProductCatalog(1, productCount);
const fx = new FxBook(1).subjects();
const liquid = Math.ceil(productCount / 50);
const now = () => performance.timeOrigin + performance.now();
let updates = 0, frames = 0, lat = [], token;
async function client(i) {
  const ws = new WebSocket(url);
  await new Promise((r) => ws.on('open', r));
  return new Promise((resolve) => {
    ws.on('message', (d) => {
      const t = now(); const ms = JSON.parse(d); frames++;
      for (const m of ms) {
        if (m.type === 'session.loggedIn') {
          token ??= m.token;
          const subs = [...fx]; for (let k = 0; subs.length < nSubs; k++) subs.push(cat.subject((i * 37 + k * 7) % liquid));
          ws.send(JSON.stringify({ type: 'record.subscribe', reqId: 2, subjects: subs }));
          resolve(ws);
        } else if (m.type === 'record.update') { updates++; if (measuring && (updates & 15) === 0) lat.push(t - m.ts); }
      }
    });
    ws.send(JSON.stringify(token ? { type: 'session.login', reqId: 1, token } : { type: 'session.login', reqId: 1, user: 'alice', password: 'alice123' }));
  });
}
let measuring = false;
await client(0);
const rest = []; for (let i = 1; i < nClients; i++) rest.push(client(i)); await Promise.all(rest);
await new Promise((r) => setTimeout(r, 2000));
updates = 0; frames = 0; lat = []; measuring = true;
const cpu0 = process.cpuUsage(); const t0 = now();
await new Promise((r) => setTimeout(r, secs * 1000));
const el = (now() - t0) / 1000; const cpu = process.cpuUsage(cpu0);
lat.sort((a, b) => a - b);
const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]?.toFixed(2);
console.log(JSON.stringify({ clients: nClients, subsPerClient: nSubs, seconds: el.toFixed(1), updatesPerSec: Math.round(updates / el), framesPerSec: Math.round(frames / el),
  latencyMs: { mean: (lat.reduce((a, b) => a + b, 0) / lat.length).toFixed(2), p50: q(0.5), p99: q(0.99), max: lat.at(-1)?.toFixed(2) }, loadCpuPct: Math.round((cpu.user + cpu.system) / 1e4 / el) }));
process.exit(0);
