#!/usr/bin/env node
/**
 * Measurement (not a unit test): what one attacker of measure-latency.mjs costs a server running
 * alone, with no victims. Reads the server process's CPU (utime + stime of /proc/<pid>/stat, all
 * its threads) and the machine's accepted TCP connections (PassiveOpens of /proc/net/snmp: on a
 * machine where only the attacker connects, its reconnects) over `rounds` pairs of windows, one
 * idle and one with the attacker running (forked from measure-latency.mjs under `nice -n 19`, as
 * there), and prints per condition the medians of the server's CPU ms/s and of accepts/s, the
 * attacker's frames/s where it counts them (subscription churn), and the extra CPU per accepted
 * connection and per frame. Linux only (/proc).
 *
 *   node apps/server/test/attacks/attack-cost.mjs <server pid> <ws url of /stream> <seconds per window> <rounds> <attacker>
 */

import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median } from './round-stats.mjs';

const harness = fileURLToPath(new URL('./measure-latency.mjs', import.meta.url));
const [pidArg, url, secondsArg, roundsArg, attacker] = process.argv.slice(2);
const pid = Number(pidArg);
const seconds = Number(secondsArg);
const rounds = Number(roundsArg);
if (!(Number.isInteger(pid) && pid > 0) || !/^ws:\/\/127\.0\.0\.1:\d+\//.test(url ?? '') || !(seconds > 0 && seconds <= 60)
  || !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 20) || !attacker) {
  console.error('usage: attack-cost.mjs <server pid> <ws://127.0.0.1:PORT/stream> <seconds per window, 0 < s <= 60> <rounds, 1..20> <attacker name of measure-latency.mjs>');
  process.exit(2);
}
const ticksPerSec = 100; // USER_HZ on Linux

/** CPU ms the server process has used so far (all threads). */
function serverCpuMs() {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command (which may contain spaces) start at state; utime and stime are 14 and 15
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / ticksPerSec;
}

/** TCP connections accepted on this machine so far. */
function passiveOpens() {
  const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Tcp:'));
  const names = lines[0].split(/\s+/);
  return Number(lines[1].split(/\s+/)[names.indexOf('PassiveOpens')]);
}

async function window(run) {
  const cpu0 = serverCpuMs();
  const opens0 = passiveOpens();
  const t0 = performance.now();
  const extra = await run();
  const secs = (performance.now() - t0) / 1000;
  return { cpuMsPerSec: (serverCpuMs() - cpu0) / secs, opensPerSec: (passiveOpens() - opens0) / secs, ...extra };
}

const wait = (ms) => new Promise((r) => setTimeout(r, ms));
const idle = [];
const attacked = [];
for (let r = 0; r < rounds; r++) {
  idle.push(await window(() => wait(seconds * 1000)));
  const child = fork(harness, ['--attacker', attacker, url], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'], execPath: 'nice', execArgv: ['-n', '19', process.execPath],
  });
  await new Promise((res) => child.once('message', res));
  await wait(500); // first connections and logins
  attacked.push(await window(async () => {
    await wait(seconds * 1000);
    return {};
  }));
  const report = new Promise((res) => child.once('message', res));
  const exited = new Promise((res) => child.once('exit', res));
  child.send('stop');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  const m = await Promise.race([report, exited.then(() => ({}))]);
  attacked.at(-1).attackerCpuMsPerSec = m.cpuMsPerSec ?? Number.NaN;
  attacked.at(-1).framesPerSec = m.framesPerSec ?? Number.NaN;
  await exited;
  clearTimeout(timer);
  await wait(1500); // the server closes what the attacker left and its penalties run out
}
console.log('| attacker | server CPU ms/s idle -> attacked | accepts/s | extra server µs per accept | frames/s | extra server µs per frame | attacker CPU ms/s |');
console.log('|---|---|---|---|---|---|---|');
const med = (xs, k) => median(xs.map((x) => x[k]));
const idleCpu = med(idle, 'cpuMsPerSec');
const cpu = med(attacked, 'cpuMsPerSec');
const opens = med(attacked, 'opensPerSec') - med(idle, 'opensPerSec');
const frames = med(attacked, 'framesPerSec');
const extraUs = (cpu - idleCpu) * 1000;
console.log(`| ${attacker} | ${idleCpu.toFixed(0)} -> ${cpu.toFixed(0)} | ${opens.toFixed(0)} | ${opens > 1 ? (extraUs / opens).toFixed(0) : '-'} | ${frames > 0 ? frames.toFixed(0) : '-'} | ${frames > 0 ? (extraUs / frames).toFixed(0) : '-'} | ${med(attacked, 'attackerCpuMsPerSec').toFixed(0)} |`);
console.log(`  per round: server ms/s idle ${idle.map((x) => x.cpuMsPerSec.toFixed(0)).join(' ')}; attacked ${attacked.map((x) => x.cpuMsPerSec.toFixed(0)).join(' ')}; accepts/s attacked ${attacked.map((x) => x.opensPerSec.toFixed(0)).join(' ')}`);
