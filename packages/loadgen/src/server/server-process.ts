/**
 * A Tidewire server the load generator runs itself (`run mass-reconnect` kills and restarts it):
 * the built server (`apps/server/dist/main.js` of this checkout, or `--server-main`) as a child
 * process on 127.0.0.1, with a config file the preset writes, started again on the same port
 * after a kill. The server's environment has no `TIDEWIRE_*` variables: its settings are the
 * config file's and the flags'. Its output is kept (the last lines name a failed start).
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoadgenError } from '../util/errors.js';

/** The built server of this checkout. */
export const DEFAULT_SERVER_MAIN = fileURLToPath(new URL('../../../../apps/server/dist/main.js', import.meta.url));

/** Lines of server output kept for error messages. */
const KEPT_LINES = 200;

/** One run of the server process. */
interface Run {
  proc: ChildProcess;
  exited: Promise<void>;
}

/** A server process this generator owns: start, kill -9, start again on the same port, stop. */
export class ServerProcess {
  private run: Run | undefined;
  private readonly lines: string[] = [];
  private readonly dir: string;
  private readonly configFile: string;
  /** The port it listens on (known after the first start). */
  port = 0;

  /** `config`: the server's JSON config (nested keys); `main`: the server's entry point. */
  constructor(config: Record<string, unknown>, private readonly main = DEFAULT_SERVER_MAIN) {
    this.dir = mkdtempSync(path.join(tmpdir(), 'loadgen-server-'));
    this.configFile = path.join(this.dir, 'config.json');
    writeFileSync(this.configFile, JSON.stringify({ ...config, admin: { auditDir: path.join(this.dir, 'audit'), ...(config.admin as object | undefined) } }));
  }

  /** `ws://127.0.0.1:<port>`. */
  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  /** The process id of the running server (0 when none). */
  get pid(): number {
    return this.run?.proc.pid ?? 0;
  }

  /** Starts the server (port 0 the first time, then the same port) and resolves once it listens. */
  async start(timeoutMs = 60_000): Promise<void> {
    if (!existsSync(this.main)) throw new LoadgenError('BAD_ARGUMENT', `the server is not built (${this.main}): run \`npm run build\` or give --server-main`);
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TIDEWIRE_')));
    const proc = spawn(process.execPath, [this.main, '--config', this.configFile, '--host', '127.0.0.1', '--port', String(this.port)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
    this.run = { proc, exited };
    let port = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new LoadgenError('TIMEOUT', `the server did not listen within ${timeoutMs} ms:\n${this.tail()}`)), timeoutMs);
      const fail = (err: Error): void => {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        reject(err);
      };
      for (const stream of [proc.stdout!, proc.stderr!]) {
        let rest = '';
        stream.setEncoding('utf8');
        stream.on('data', (chunk: string) => {
          const parts = (rest + chunk).split('\n');
          rest = parts.pop()!;
          for (const line of parts) {
            this.lines.push(line);
            const m = /Tidewire listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
            if (m && port === 0) {
              port = Number(m[1]);
              clearTimeout(timer);
              resolve();
            }
          }
          if (this.lines.length > KEPT_LINES) this.lines.splice(0, this.lines.length - KEPT_LINES);
        });
      }
      void exited.then(() => {
        if (port === 0) fail(new LoadgenError('SERVER_REFUSED', `the server exited (${String(proc.exitCode ?? proc.signalCode)}) before listening:\n${this.tail()}`));
      });
    });
    this.port = port;
  }

  /** SIGKILL (as `kill -9`): resolves once the process is gone. */
  async kill(): Promise<void> {
    const run = this.run;
    if (!run) return;
    run.proc.kill('SIGKILL');
    await run.exited;
    this.run = undefined;
  }

  /** SIGTERM (SIGKILL after `timeoutMs`), then removes the config directory. */
  async stop(timeoutMs = 10_000): Promise<void> {
    const run = this.run;
    if (run) {
      run.proc.kill('SIGTERM');
      const timer = setTimeout(() => run.proc.kill('SIGKILL'), timeoutMs);
      await run.exited;
      clearTimeout(timer);
      this.run = undefined;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The server's last lines of output. */
  tail(n = 30): string {
    return this.lines.slice(-n).join('\n');
  }
}
