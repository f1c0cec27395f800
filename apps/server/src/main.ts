#!/usr/bin/env node
/**
 * `tidewire-server`: load config, start the server, stop gracefully on SIGINT/SIGTERM, reload
 * users and rules on SIGHUP.
 * No logic here: see server.ts.
 */

import { hashPassword } from './auth/passwords.js';
import { ConfigError, helpText, loadCommandConfig, parseArgs, processEnv } from './config.js';
import { log } from './log.js';
import { startServer } from './server.js';
import { PortInUseError } from './transport/port-guard.js';

/** A shutdown signal this soon after the first is the same request delivered twice, ms. */
const REPEATED_SIGNAL_MS = 1_000;

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let config;
  try {
    const args = parseArgs(argv);
    if (args.help) {
      // the defaults that apply: no flags, no config file, no environment
      console.log(helpText(loadCommandConfig()));
      return 0;
    }
    if (args.hashPassword !== undefined) {
      console.log(await hashPassword(args.hashPassword));
      return 0;
    }
    config = loadCommandConfig({ argv, env: processEnv() });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`tidewire: bad configuration: ${err.message}`);
      return 2;
    }
    throw err;
  }
  const reloadConfig = () => loadCommandConfig({ argv, env: processEnv() });
  let server;
  try {
    server = await startServer(config, { reloadConfig });
  } catch (err) {
    if (err instanceof PortInUseError) {
      console.error(`tidewire: ${err.message}`);
      return 1;
    }
    throw err;
  }
  console.log(`Tidewire listening on ${server.url} (stream: ${server.url.replace('http', 'ws')}/stream)`);
  if (server.fix) {
    const sessions = config.fix.sessions.map((s) => `${s.beginString} ${s.targetCompId}->${s.senderCompId} as ${s.user}`).join(', ');
    console.log(`FIX acceptor on ${config.server.host}:${server.fix.port} (${sessions})`);
  }
  let exitCode = 0;
  await new Promise<void>((resolve) => {
    let stoppingSince = -1;
    const stop = (signal: string): void => {
      if (stoppingSince >= 0) {
        // one Ctrl-C or `kill` often arrives twice (the terminal's process group and a wrapper such
        // as `npm start` forwarding it): only a second signal a while after the first forces the exit
        if (performance.now() - stoppingSince < REPEATED_SIGNAL_MS) return;
        log('warn', 'server.forcedExit', { signal });
        process.exit(1);
      }
      stoppingSince = performance.now();
      log('info', 'server.shutdown', { signal });
      server.close().then(resolve, (err) => {
        log('error', 'server.shutdownFailed', { error: String(err) });
        resolve();
      });
    };
    // SIGHUP: re-read the config (file, env, flags) and apply users, passwords and rules
    process.on('SIGHUP', () => {
      server.admin.reload('SIGHUP').catch((err) => log('error', 'auth.reloadFailed', { error: err instanceof Error ? err.message : String(err), kept: 'the running users and rules' }));
    });
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    // the server cannot go on (server.ts `stopRequested`): stop it gracefully, exit with its code
    void server.stopRequested.then((r) => {
      if (stoppingSince >= 0) return;
      console.error(`tidewire: ${r.reason}; stopping (exit ${r.exitCode})`);
      exitCode = r.exitCode;
      stop('stopRequested');
    });
  });
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log('error', 'server.startFailed', { error: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  },
);
