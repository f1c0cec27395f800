import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, helpText, loadConfig, nodeNameOf } from './config.js';
import { engineConfig } from './engine.js';

const load = (sources: Parameters<typeof loadConfig>[0] = {}) => loadConfig({ randomSecret: () => 's'.repeat(32), hostname: () => 'host.example.com', ...sources });

const dir = mkdtempSync(path.join(tmpdir(), 'tidewire-cluster-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const URLS = 'nats://127.0.0.1:4222, nats://127.0.0.1:4223,tls://nats-3.internal:4222';
const SECRET = ['--token-secret', 'a-shared-cluster-secret'];

describe('cluster settings', () => {
  it('take a FIX port: the gateway uses the cluster order path, its session store per node beside the journal', () => {
    const journal = path.join(dir, 'node-journal');
    const c = load({ argv: ['--cluster', URLS, ...SECRET, '--fix-port', '9878', '--fix-demo-sessions', '--journal-dir', journal] });
    expect(c.fix.port).toBe(9878);
    expect(c.fix.storeDir).toBe(path.join(dir, 'fix'));
  });

  it('are off by default: no URLs, nothing cluster-related passed to the engine', () => {
    const c = load();
    expect(c.cluster).toEqual({ urls: [], node: 'host-example-com', name: 'tidewire', replicas: 3, requestTimeoutMs: 2000 });
    const e = engineConfig(c);
    expect(Object.keys(e).filter((k) => k.startsWith('cluster'))).toEqual([]);
  });

  it('read the URLs, node, name, replicas and timeout from flags and env, and pass them to the engine', () => {
    const c = load({
      env: { TIDEWIRE_CLUSTER_NAME: 'desk-a', TIDEWIRE_CLUSTER_REPLICAS: '5' },
      argv: ['--cluster', URLS, '--cluster-node', 'node_b-2', '--cluster-request-timeout-ms', '750', ...SECRET],
    });
    expect(c.cluster).toEqual({
      urls: ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4223', 'tls://nats-3.internal:4222'],
      node: 'node_b-2', name: 'desk-a', replicas: 5, requestTimeoutMs: 750,
    });
    expect(engineConfig(c)).toMatchObject({
      clusterUrls: ['nats://127.0.0.1:4222', 'nats://127.0.0.1:4223', 'tls://nats-3.internal:4222'],
      clusterNode: 'node_b-2', clusterName: 'desk-a', clusterReplicas: 5, clusterRequestTimeoutMs: 750,
    });
    expect(load({ env: { TIDEWIRE_CLUSTER: 'nats://10.0.0.1:4222', TIDEWIRE_TOKEN_SECRET: 'a-shared-cluster-secret' } }).cluster.urls).toEqual(['nats://10.0.0.1:4222']);
  });

  it('refuse bad values with the setting, the rule and the value', () => {
    const bad: Array<[string[], string]> = [
      [['--cluster', 'http://127.0.0.1:4222', ...SECRET], '--cluster must be empty or comma-separated NATS URLs (nats://host:port, tls://host:port), got "http://127.0.0.1:4222"'],
      [['--cluster', 'nats://127.0.0.1', ...SECRET], '--cluster must be empty or comma-separated NATS URLs (nats://host:port, tls://host:port), got "nats://127.0.0.1"'],
      [['--cluster', 'nats://a:1,,nats://b:2', ...SECRET], '--cluster must be empty or comma-separated NATS URLs (nats://host:port, tls://host:port), got "nats://a:1,,nats://b:2"'],
      [['--cluster-node', 'node.one'], '--cluster-node must be empty or 1..64 characters of [A-Za-z0-9_-], got "node.one"'],
      [['--cluster-name', ''], '--cluster-name must be 1..64 characters of [A-Za-z0-9_-], got ""'],
      [['--cluster-replicas', '6'], '--cluster-replicas must be an integer 1..5, got "6"'],
      [['--cluster-request-timeout-ms', '50'], '--cluster-request-timeout-ms must be an integer 100..60000, got "50"'],
    ];
    for (const [argv, message] of bad) expect(() => load({ argv }), argv.join(' ')).toThrow(new ConfigError(message));
  });

  it('need a token secret shared by the nodes: a generated one stops the start', () => {
    expect(() => load({ argv: ['--cluster', URLS] })).toThrow(
      /^cluster mode \(cluster\.urls\) needs a token secret shared by every node: set auth\.tokenSecretFile \(--token-secret-file, TIDEWIRE_TOKEN_SECRET_FILE\) or auth\.tokenSecret/,
    );
    const c = load({ argv: ['--cluster', URLS, ...SECRET] });
    expect(c.auth).toMatchObject({ tokenSecret: 'a-shared-cluster-secret', tokenSecretGenerated: false, tokenSecretFile: '' });
  });

  it('host names become node names usable as subject tokens', () => {
    expect(nodeNameOf('ip-10-0-0-7.eu-west-1.compute.internal')).toBe('ip-10-0-0-7-eu-west-1-compute-internal');
    expect(nodeNameOf('x'.repeat(80))).toBe('x'.repeat(64));
    expect(nodeNameOf('')).toBe('node');
    expect(load({ hostname: () => 'trading-01' }).cluster.node).toBe('trading-01');
  });

  it('--help lists every cluster flag', () => {
    const help = helpText(load());
    for (const flag of ['--cluster <URLs>', '--cluster-node <name>', '--cluster-name <name>', '--cluster-replicas <replicas>', '--cluster-request-timeout-ms <ms>', '--token-secret-file <path>']) {
      expect(help).toContain(flag);
    }
  });
});

describe('auth.tokenSecretFile', () => {
  it('reads the secret from the first line of the file (absolute path kept), for cluster mode too', () => {
    const file = secretFile('secret', 'a-secret-from-a-file-0123\n');
    const c = load({ argv: ['--token-secret-file', file, '--cluster', URLS] });
    expect(c.auth).toMatchObject({ tokenSecret: 'a-secret-from-a-file-0123', tokenSecretGenerated: false, tokenSecretFile: file });
    const crlf = secretFile('secret-crlf', 'another-secret-from-a-file\r\nsecond line ignored\r\n');
    expect(load({ env: { TIDEWIRE_TOKEN_SECRET_FILE: crlf } }).auth.tokenSecret).toBe('another-secret-from-a-file');
  });

  it('refuses a missing, empty or short file, and a secret given twice', () => {
    const missing = path.join(dir, 'missing');
    expect(() => load({ argv: ['--token-secret-file', missing] })).toThrow(new RegExp(`^auth\\.tokenSecretFile ${missing}: cannot read \\(ENOENT`));
    const empty = secretFile('empty', '\nsecret on the second line\n');
    expect(() => load({ argv: ['--token-secret-file', empty] })).toThrow(new ConfigError(`auth.tokenSecretFile ${empty}: the first line is empty (the file must hold the secret)`));
    const short = secretFile('short', 'short\n');
    expect(() => load({ argv: ['--token-secret-file', short] })).toThrow(new ConfigError(`auth.tokenSecretFile ${short}: the secret must be at least 16 characters, got 5`));
    const ok = secretFile('ok', 'a-secret-from-a-file-0123');
    expect(() => load({ argv: ['--token-secret-file', ok, ...SECRET] })).toThrow(new ConfigError('auth.tokenSecret and auth.tokenSecretFile are both set: give the secret one way'));
  });
});
