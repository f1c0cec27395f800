/**
 * `npx tidewire-loadgen` is the documented command line: npm links the package's bin at
 * install time, before the build, so the linked file must exist in a fresh clone. This runs the
 * linked command from the repository root, as a user would.
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('the tidewire-loadgen command', () => {
  it('is linked by npm install and prints its usage', () => {
    const r = spawnSync('npx', ['--no-install', 'tidewire-loadgen', '--help'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).not.toContain('404');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: tidewire-loadgen <command>');
    expect(r.stdout).toContain('run');
  }, 70_000);

  it('answers an unknown command with exit code 2 and a message', () => {
    const r = spawnSync('npx', ['--no-install', 'tidewire-loadgen', 'no-such-command'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no-such-command');
  }, 70_000);
});
