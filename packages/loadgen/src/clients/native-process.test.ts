/**
 * NativeProcess against a stand-in simulator (a Node script speaking the same JSON lines), so the
 * start, answer matching, error, timeout, exit and stop paths run without the Rust build; the real
 * simulator runs in native-view-runs.test.ts, native-orders.test.ts and runner.test.ts.
 */

import { describe, expect, it } from 'vitest';
import { NativeProcess, type NativeLine, type NativeProcessOptions } from './native-process.js';

/**
 * The stand-in, by its first argument: `crash` (stderr, exit 2 before ready), `poll-error` (an
 * error line, exit 1), `order` / `id` (ready, then answers: `hold` is answered only after the next
 * command, before it in `order` mode, after it in `id` mode; `bad` gets an error line, `die`
 * exits 3 with stderr, `stop` exits 0; each answer is preceded by a non-JSON line and a `null`,
 * and in `id` mode by an unprompted `left` event).
 */
const SCRIPT = `
const mode = process.argv[1];
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
if (mode === 'crash') { process.stderr.write('unknown flag --nope\\n'); process.exit(2); }
if (mode === 'poll-error') { out({ event: 'error', message: 'cannot create poll: nope' }); process.exit(1); }
out({ event: 'ready', threads: 1 });
let held;
require('node:readline').createInterface({ input: process.stdin }).on('line', (text) => {
  const c = JSON.parse(text);
  if (c.cmd === 'stop') { out({ event: 'stopped' }); process.exit(0); }
  if (c.cmd === 'die') { process.stderr.write('worker panicked\\n'); process.exit(3); }
  if (c.cmd === 'hold') { held = c; return; }
  process.stdout.write('not a protocol line\\nnull\\n');
  if (mode === 'id') out({ event: 'left', rows: [] });
  const answer = c.cmd === 'bad' ? { event: 'error', id: c.id, message: 'unknown cmd "bad"' } : { event: 'echo', of: c.cmd, id: c.id };
  const late = held && { event: 'echo', of: held.cmd, id: held.id };
  held = undefined;
  for (const l of mode === 'id' ? [answer, late] : [late, answer]) if (l) out(l);
});
`;

const standIn = (mode: string, more: Partial<NativeProcessOptions> = {}): NativeProcessOptions => ({
  name: 'test simulator', replies: mode === 'id' ? 'id' : 'order', args: ['-e', SCRIPT, mode], command: process.execPath, ...more,
});

describe('NativeProcess', () => {
  it('a process that exits before ready: NATIVE_FAILED with its exit code and stderr', async () => {
    await expect(NativeProcess.start(standIn('crash'))).rejects.toMatchObject({
      code: 'NATIVE_FAILED', message: 'test simulator exited (2): unknown flag --nope',
    });
  });

  it('an error line instead of ready: NATIVE_FAILED with its message', async () => {
    await expect(NativeProcess.start(standIn('poll-error'))).rejects.toMatchObject({
      code: 'NATIVE_FAILED', message: 'test simulator: cannot create poll: nope',
    });
  });

  it('answers in order: error answers, a timed-out command keeps its place, stop is idempotent', async () => {
    const p = await NativeProcess.start(standIn('order'));
    try {
      expect(await p.call({ cmd: 'a' }, 10_000)).toEqual({ event: 'echo', of: 'a' });
      await expect(p.call({ cmd: 'bad' }, 10_000)).rejects.toMatchObject({ code: 'NATIVE_FAILED', message: 'test simulator: unknown cmd "bad"' });
      await expect(p.call({ cmd: 'hold' }, 50)).rejects.toMatchObject({ code: 'TIMEOUT', message: 'test simulator gave no answer to hold within 50 ms' });
      // hold's late answer comes first and is dropped with its slot: b gets its own
      expect(await p.call({ cmd: 'b' }, 10_000)).toEqual({ event: 'echo', of: 'b' });
      expect(p.exited).toBeUndefined();
    } finally {
      await Promise.all([p.stop(), p.stop()]);
    }
    await expect(p.call({ cmd: 'c' }, 10_000)).rejects.toMatchObject({ code: 'NATIVE_FAILED', message: 'test simulator exited (0)' });
    await p.stop();
  });

  it('answers by id in any order; unprompted events go to onEvent', async () => {
    const events: NativeLine[] = [];
    const p = new NativeProcess(standIn('id', { onEvent: (l) => l.event === 'left' && events.push(l) > 0 }));
    try {
      const held = p.call({ cmd: 'hold' }, 10_000); // before ready: sent once it is
      const next = await p.call({ cmd: 'next' }, 10_000);
      expect(next).toEqual({ event: 'echo', of: 'next', id: 2 });
      expect(await held).toEqual({ event: 'echo', of: 'hold', id: 1 });
      await expect(p.call({ cmd: 'bad' }, 10_000)).rejects.toMatchObject({ code: 'NATIVE_FAILED', message: 'test simulator: unknown cmd "bad"' });
      expect(events).toEqual([{ event: 'left', rows: [] }, { event: 'left', rows: [] }]);
    } finally {
      await p.stop();
    }
  });

  it('an exit while commands wait rejects them with the exit code and stderr', async () => {
    const p = await NativeProcess.start(standIn('id'));
    const held = p.call({ cmd: 'hold' }, 10_000);
    await expect(p.call({ cmd: 'die' }, 10_000)).rejects.toMatchObject({ code: 'NATIVE_FAILED', message: 'test simulator exited (3): worker panicked' });
    await expect(held).rejects.toMatchObject({ code: 'NATIVE_FAILED', message: 'test simulator exited (3): worker panicked' });
    expect(p.exited).toBe('test simulator exited (3): worker panicked');
    await p.stop(); // already gone: returns at once
  });
});
