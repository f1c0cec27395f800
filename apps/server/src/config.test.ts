import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseArgs } from './config.js';
import { SETTINGS } from './config-spec.js';

const fixedSecret = () => 'f'.repeat(64);

describe('loadConfig', () => {
  it('has documented defaults and is frozen', () => {
    const c = loadConfig({ randomSecret: fixedSecret });
    expect(c.server.host).toBe('127.0.0.1');
    expect(c.server.port).toBe(8080);
    expect(c.server.workers).toBeGreaterThanOrEqual(1);
    expect(c.server.workers).toBeLessThanOrEqual(2);
    expect(c.demo).toMatchObject({ enabled: true, productCount: 50_000, productUpdatesPerSec: 5000 });
    expect(c.auth.tokenSecret).toBe(fixedSecret());
    expect(c.auth.tokenSecretGenerated).toBe(true);
    expect(c.server.webRoot.endsWith(path.join('apps', 'web', 'dist'))).toBe(true);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.server)).toBe(true);
    expect(() => {
      (c.server as { port: number }).port = 1;
    }).toThrow();
  });

  it('layers file <- env <- flags', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tw-config-'));
    const file = path.join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ server: { port: 9000, host: '0.0.0.0' }, batching: { burstMaxMs: 500 } }));
    const c = loadConfig({
      argv: ['--config', file, '--port=9100', '--no-demo', '--workers', '1'],
      env: { PORT: '9050', TIDEWIRE_BURST_MIN_MS: '25', TIDEWIRE_TOKEN_SECRET: 'a-long-enough-secret' },
    });
    expect(c.server).toMatchObject({ port: 9100, host: '0.0.0.0', workers: 1 });
    expect(c.batching).toMatchObject({ burstMinMs: 25, burstMaxMs: 500 });
    expect(c.demo.enabled).toBe(false);
    expect(c.auth).toMatchObject({ tokenSecret: 'a-long-enough-secret', tokenSecretGenerated: false });
  });

  it('reads the file named by TIDEWIRE_CONFIG', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tw-config-'));
    const file = path.join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ demo: { seed: 42 } }));
    expect(loadConfig({ env: { TIDEWIRE_CONFIG: file } }).demo.seed).toBe(42);
  });

  it.each([
    [{ env: { PORT: 'abc' } }, 'PORT must be an integer 0..65535, got "abc"'],
    [{ env: { PORT: '70000' } }, 'PORT must be an integer 0..65535, got "70000"'],
    [{ argv: ['--workers', '0'] }, '--workers must be an integer 1..64, got "0"'],
    [{ argv: ['--idle-timeout-sec', '5'] }, '--idle-timeout-sec must be 0 or an integer 8..960, got "5"'],
    [{ env: { TIDEWIRE_DEMO: 'maybe' } }, 'TIDEWIRE_DEMO must be true or false, got "maybe"'],
    [{ argv: ['--bogus'] }, 'unknown flag --bogus'],
    [{ argv: ['--port'] }, '--port needs a value'],
    [{ argv: ['8080'] }, 'unexpected argument "8080"'],
    [{ env: { TIDEWIRE_TOKEN_SECRET: 'short' } }, 'must be at least 16 characters, got 5'],
    [{ argv: ['--burst-min-ms', '200', '--burst-max-ms', '100'] }, 'batching.burstMaxMs (100) must be 0 (off) or >= batching.burstMinMs (200)'],
    [{ overrides: { server: { nope: 1 } } }, 'unknown setting "server.nope"'],
    [{ overrides: { nope: {} } }, 'unknown section "nope"'],
    [{ overrides: { limits: { loginTimeoutMs: 1.5 } } }, 'overrides limits.loginTimeoutMs must be an integer 10..600000, got 1.5'],
    [{ overrides: { auth: { users: [{ user: 'x', passwordHash: 'plain', role: 'trader', tier: 'T1' }] } } }, 'auth.users.0.passwordHash must be "scrypt$N$r$p$salt$hash"'],
    [{ overrides: { auth: { users: [{ user: 'x', passwordHash: 'scrypt$16384$8$1$AAAA$AAAA', role: 'boss', tier: 'T1' }] } } }, 'auth.users.0.role must be one of trader, admin, source, got "boss"'],
    [{ overrides: { auth: { demoUsers: false } } }, 'nobody could log in'],
  ])('rejects %j', (sources, message) => {
    expect(() => loadConfig(sources)).toThrow(ConfigError);
    expect(() => loadConfig(sources)).toThrow(message);
  });

  it('rejects unreadable and invalid config files with the path', () => {
    expect(() => loadConfig({ argv: ['--config', '/nonexistent/x.json'] })).toThrow('config file /nonexistent/x.json: cannot read');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tw-config-'));
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, '{ port: 1 }');
    expect(() => loadConfig({ argv: ['--config', file] })).toThrow(`config file ${file}: not valid JSON`);
  });

  it('accepts users from the config file', () => {
    const hash = 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=';
    const c = loadConfig({ overrides: { auth: { users: [{ user: 'carol', passwordHash: hash, role: 'admin', tier: 'T3' }] } } });
    expect(c.auth.users).toEqual([{ user: 'carol', passwordHash: hash, role: 'admin', tier: 'T3' }]);
  });
});

describe('parseArgs', () => {
  it('parses special flags', () => {
    const a = parseArgs(['--hash-password', 'pw', '--help']);
    expect(a.hashPassword).toBe('pw');
    expect(a.help).toBe(true);
  });
});

describe('settings table', () => {
  it('has unique env names and flags, and every setting is in docs/configuration.md', async () => {
    const envs = new Set(SETTINGS.map((s) => s.env));
    const flags = new Set(SETTINGS.map((s) => s.flag));
    expect(envs.size).toBe(SETTINGS.length);
    expect(flags.size).toBe(SETTINGS.length);
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    for (const s of SETTINGS) {
      expect(doc, s.path).toContain(`\`${s.path}\``);
      expect(doc, s.env).toContain(`\`${s.env}\``);
      expect(doc, s.flag).toContain(`\`--${s.flag}\``);
    }
  });
});
