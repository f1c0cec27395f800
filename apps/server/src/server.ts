/**
 * Builds a whole server from a Config: user directory, engine, transport (on this thread, or N
 * worker threads), demo feed. Used by main.ts and by the integration tests.
 */

import { getHeapStatistics } from 'node:v8';
import { AuditLog } from './admin/audit-log.js';
import { MainAdminControl } from './admin/control.js';
import { FilePrefsStore, NO_PREFS } from './prefs/prefs-store.js';
import type { Config } from './config.js';
import { buildUsers, UserDirectory } from './auth/users.js';
import { createSecurity } from './entitlements/security.js';
import { startFixGateway, type FixHandle } from './fix/gateway.js';
import { createEngine, type ServerEngine } from './engine.js';
import { DemoFeed, heldByBacklog } from './feeds/demo.js';
import { DEMO_TIERS } from './feeds/demo-views.js';
import { serverStatements, startServerStatements } from './analytics/server-statements.js';
import { log } from './log.js';
import { METRICS_INTERVAL_MS, MetricsCenter } from './metrics/center.js';
import { preciseClock, type Clock } from './session/clock.js';
import { startTransport, type TransportHandle } from './transport/transport.js';
import { freePort } from './transport/free-port.js';
import { claimPort, type PortClaim } from './transport/port-guard.js';
import { startWorkerTransports } from './transport/workers.js';
import { SharedCounter } from './limits/shared-counter.js';
import type { AuthReloadResult } from './transport/auth-reload.js';

/**
 * Exit code of a cluster node that stopped applying the order stream because its order history
 * diverged from the stream's (docs/operations.md, "A node that diverged"): its supervisor starts
 * it again, and it rebuilds from the stream.
 */
export const EXIT_ORDER_STREAM_DIVERGED = 3;

/** How often a cluster node looks at `orderStreamDivergedAt`, ms. */
const DIVERGENCE_CHECK_MS = 250;

/** Why a server asks to be stopped on its own (main.ts stops it and exits with `exitCode`). */
export interface StopRequest {
  readonly exitCode: number;
  readonly reason: string;
}

/** A running server. */
export interface RunningServer {
  /** The port it listens on (the configured one, or the one picked for port 0). */
  readonly port: number;
  /** `http://host:port`. */
  readonly url: string;
  /** The engine (main thread); tests read its stats. */
  readonly engine: ServerEngine;
  /** The demo feed when enabled. */
  readonly feed: DemoFeed | undefined;
  /** The FIX order gateway when `fix.port` is set. */
  readonly fix: FixHandle | undefined;
  /** Server-wide metrics (one sample per METRICS_INTERVAL_MS). */
  readonly metrics: MetricsCenter;
  /** Admin actions (settings, kicks) and the audit log they write. */
  readonly admin: MainAdminControl;
  /**
   * Applies the users, passwords and rules of `next` (a freshly loaded config; other settings
   * are ignored until a restart) to new logins and open sessions (transport.ts `reloadAuth`),
   * and writes a `reload` line to the audit log naming `by`. Rejects when a worker did not confirm.
   */
  reloadAuth(next: Config, by: string): Promise<AuthReloadResult & { users: number }>;
  /**
   * Ends the current metrics interval now and publishes it with the sessions list to every
   * transport (tests; the timer does it every second, with the list only while something reads it).
   */
  collectMetrics(): Promise<void>;
  /**
   * Graceful stop: stop listening, close sessions with 1001, stop the feed, shut the engine down.
   * Idempotent.
   */
  close(): Promise<void>;
  /**
   * Resolves when the server cannot go on serving and must be stopped and started again: a
   * cluster node whose order history diverged from the order stream's (it would serve a frozen
   * blotter). Never resolves otherwise.
   */
  readonly stopRequested: Promise<StopRequest>;
}


/** Options of startServer. */
export interface StartOptions {
  /** Time source. @default preciseClock */
  clock?: Clock;
  /**
   * Re-reads the configuration for a reload (`POST /api/admin/reload`, SIGHUP in main.ts); throws
   * ConfigError when it is invalid. Absent: the admin API answers 503 to reloads.
   */
  reloadConfig?: () => Config;
}

/** Starts a server for `config`; resolves when it listens. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? preciseClock;
  // an explicit port is claimed before anything else: a port another process holds stops the
  // start with PortInUseError before any work or log line (port-guard.ts says why uWS cannot tell)
  const claim = config.server.port === 0 ? undefined : await claimPort(config.server.host, config.server.port);
  try {
    return await startClaimed(config, clock, options, claim);
  } catch (err) {
    await claim?.release();
    throw err;
  }
}

async function startClaimed(config: Config, clock: Clock, options: StartOptions, claim: PortClaim | undefined): Promise<RunningServer> {
  const users = await buildUsers(config);
  if (config.auth.tokenSecretGenerated) log('info', 'auth.secret', { source: 'random per start (set TIDEWIRE_TOKEN_SECRET to keep tokens valid across restarts)' });
  if (config.cluster.urls.length > 0) {
    log('info', 'cluster.mode', { node: config.cluster.node, cluster: config.cluster.name, nats: config.cluster.urls.join(','), replicas: config.cluster.replicas });
  }
  const engine = createEngine(config);
  // one connection-count table for every transport worker (limits.maxConnectionsPer*)
  const connections = SharedCounter.allocate();
  const audit = new AuditLog(config.admin.auditDir);
  const admin = new MainAdminControl(config.batching, engine, audit, clock, config.prefs.dir === '' ? NO_PREFS : new FilePrefsStore(config.prefs.dir));
  // statements run before the first publish, so their results cover the whole feed
  try {
    await startServerStatements(engine, serverStatements(config));
  } catch (err) {
    engine.shutdown();
    throw err;
  }
  // images are published before the port opens, so the first clients see a full catalog
  let feed: DemoFeed | undefined;
  if (config.demo.enabled) {
    feed = new DemoFeed(config.demo, (frame) => engine.ingest(frame), clock, {
      publishContainer: (m) => engine.containerPublish(m.subject, m.ops),
      tiers: DEMO_TIERS,
    }, heldByBacklog(() => engine.ingestQueue().bytes, config.limits));
    feed.start();
  }
  // FIX orders get the WebSocket orders' checks: these users and rules (kept current by reloads)
  // and the server-wide order-rate table the transports share
  const fixUsers = new UserDirectory(users);
  const fixSecurity = createSecurity(config, connections);
  let fix: FixHandle | undefined;
  if (config.fix.port !== 0) {
    try {
      fix = startFixGateway(config, engine, { users: () => fixUsers, security: () => fixSecurity, clock });
    } catch (err) {
      feed?.stop();
      engine.shutdown();
      throw err;
    }
    admin.setFix(fix);
  }
  let transport: TransportHandle | undefined;
  // port 0: pick a free port first (see free-port.ts) and claim it; retry if another process took it meanwhile
  for (let attempt = 1; !transport; attempt++) {
    try {
      if (config.server.port === 0) claim = await claimPort(config.server.host, await freePort(config.server.host));
      const port = claim!.port;
      const portConfig: Config = port === config.server.port ? config : { ...config, server: { ...config.server, port } };
      transport = config.server.workers === 1
        ? await startTransport({ config: portConfig, users, engine, clock, index: 0, port, control: admin, connections })
        : await startWorkerTransports(portConfig, users, engine.id, admin, connections);
    } catch (err) {
      if (config.server.port === 0) {
        await claim?.release();
        claim = undefined;
        if (attempt < 5) continue;
      }
      feed?.stop();
      engine.shutdown();
      await fix?.stop();
      throw err;
    }
  }
  const portClaim = claim!;
  const running = transport;
  admin.setKicker((sid, reason) => running.kick(sid, reason));
  if (options.reloadConfig) {
    const reloadConfig = options.reloadConfig;
    admin.setReloader((by) => reloadAuth(reloadConfig(), by));
  }
  async function reloadAuth(next: Config, by: string): Promise<AuthReloadResult & { users: number }> {
    const nextUsers = await buildUsers(next);
    const result = await running.reloadAuth(nextUsers, next.auth.roles);
    fixUsers.replace(nextUsers);
    fixSecurity.entitlements.setRoles(next.auth.roles);
    await audit.append({ at: new Date(clock.now()).toISOString(), by, action: 'reload', users: nextUsers.length, ...result });
    log('info', 'auth.reload', { by, users: nextUsers.length, ...result });
    return { users: nextUsers.length, ...result };
  }
  const metrics = new MetricsCenter({
    clock,
    engineStats: () => engine.stats(),
    batching: () => admin.batchingNow(),
    cpuUsage: () => process.cpuUsage(),
    rssBytes: () => process.memoryUsage.rss(),
    kicks: () => admin.kicks,
    // with worker transports the main thread (feed, engine handle) is not in any snapshot
    otherHeapBytes: () => (config.server.workers === 1 ? 0 : getHeapStatistics().used_heap_size),
    takeOrderAckLatencies: () => engine.takeOrderAckLatencies(),
    ingestQueue: () => engine.ingestQueue(),
    orderStages: () => engine.orderStages(),
    natsServer: () => engine.clusterNatsServer(),
    demoHeldTicks: () => feed?.stats.heldTicks ?? 0,
    fixSessions: () => fix?.sessions() ?? [],
    clusterMode: config.cluster.urls.length > 0,
  });
  // one interval at a time: a slow worker answer must not make collections overlap. The sessions
  // list (building it, cloning it here and back) is collected only while a transport reads it
  // (admin streams, recent HTTP reads), or when `everyone` (collectMetrics): then every transport gets it
  let collecting: Promise<void> | undefined;
  let collectingEveryone = false;
  const collect = (everyone: boolean): Promise<void> => {
    // a collection without the list for everyone in flight: the asked one comes after it
    if (collecting !== undefined && everyone && !collectingEveryone) return collecting.then(() => collect(true));
    collectingEveryone = collecting === undefined ? everyone : collectingEveryone;
    collecting ??= (async () => {
      try {
        running.publish(metrics.build(await running.collect(everyone || running.sessionsWanted())), everyone);
      } catch (err) {
        log('error', 'metrics.collectFailed', { error: String(err) });
      } finally {
        collecting = undefined;
      }
    })();
    return collecting;
  };
  const collectMetrics = (): Promise<void> => collect(true);
  const metricsTimer = setInterval(() => void collect(false), METRICS_INTERVAL_MS);
  metricsTimer.unref();
  // a node that stopped applying the order stream serves a frozen order book: it asks to be
  // restarted (a restart rebuilds it from the stream) and its clients move to the other nodes
  let requestStop: (r: StopRequest) => void = () => {};
  const stopRequested = new Promise<StopRequest>((resolve) => (requestStop = resolve));
  const divergenceTimer = config.cluster.urls.length === 0 ? undefined : setInterval(() => {
    const seq = engine.stats().orderStreamDivergedAt;
    if (seq === 0) return;
    clearInterval(divergenceTimer);
    log('error', 'cluster.orderStreamDiverged', { seq, exitCode: EXIT_ORDER_STREAM_DIVERGED, action: 'stopping: restart the node to rebuild it from the order stream' });
    requestStop({ exitCode: EXIT_ORDER_STREAM_DIVERGED, reason: `the order history diverged from the order stream at seq ${seq}` });
  }, DIVERGENCE_CHECK_MS);
  divergenceTimer?.unref();
  const urlHost = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const url = `http://${urlHost}:${transport.port}`;
  log('info', 'server.ready', { url, workers: config.server.workers, demo: config.demo.enabled, users: users.length });
  let closing: Promise<void> | undefined;
  return {
    port: transport.port,
    url,
    engine,
    feed,
    fix,
    metrics,
    admin,
    collectMetrics,
    reloadAuth,
    stopRequested,
    close() {
      closing ??= (async () => {
        clearInterval(metricsTimer);
        clearInterval(divergenceTimer);
        feed?.stop();
        await transport.close();
        await portClaim.release();
        // bounded: queued work is handled for the engine's drain budget, the rest is dropped and counted
        const dropped = engine.shutdown();
        if (dropped) log('warn', 'engine.shutdownDropped', { detail: dropped });
        // after the engine: every durable order event was handed to the gateway, which stores
        // its reports before the FIX connections close
        await fix?.stop();
        log('info', 'server.closed', { url });
      })();
      return closing;
    },
  };
}
