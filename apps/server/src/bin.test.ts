/**
 * `npx tidewire-server`: npm links the package's bin at install time, before the build, so the
 * linked file must exist in a fresh clone. This runs the linked command from the repository root,
 * and checks that `--help` prints, for every flag, the default that really applies.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GENERATED_SECRET_HELP, loadCommandConfig } from './config.js';
import { SETTINGS } from './config-spec.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** The process environment without anything the server reads (PORT, HOST, TIDEWIRE_*). */
function cleanEnv(): NodeJS.ProcessEnv {
  const names = new Set([...SETTINGS.map((s) => s.env), 'TIDEWIRE_CONFIG']);
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !names.has(k)));
}

describe('the tidewire-server command', () => {
  it('is linked by npm install and prints its flags', () => {
    const r = spawnSync('npx', ['--no-install', 'tidewire-server', '--help'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).not.toContain('404');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: tidewire-server');
    expect(r.stdout).toContain('--journal-dir');
  }, 70_000);

  it('--help shows, for every flag, the value the command uses when the flag is not given', () => {
    if (!existsSync(main)) throw new Error(`${main} is missing: build the server first (npm run build)`);
    // the same working directory for both: relative defaults (admin.auditDir) resolve against it
    const r = spawnSync(process.execPath, [main, '--help'], { cwd: process.cwd(), env: cleanEnv(), encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    const printed = new Map<string, string>();
    for (const line of r.stdout.split('\n')) {
      const m = /^ {2}--([a-z0-9-]+)[^,]*, default (.*)$/.exec(line);
      if (m) printed.set(m[1]!, m[2]!);
    }
    const effective = loadCommandConfig() as unknown as Record<string, Record<string, unknown>>;
    expect(effective.auth!.tokenSecretGenerated).toBe(true);
    for (const s of SETTINGS) {
      const shown = printed.get(s.flag);
      expect(shown, `--${s.flag} in --help`).toBeDefined();
      const [section, key] = s.path.split('.') as [string, string];
      if (s.path === 'auth.tokenSecret') expect(shown).toBe(GENERATED_SECRET_HELP);
      else expect(JSON.parse(shown!), `default of --${s.flag}`).toEqual(effective[section]![key]);
    }
    expect(printed.size).toBe(SETTINGS.length);
    // the case that drifted: the command journals orders by default
    expect(printed.get('journal-dir')).not.toBe('""');
  });
});
