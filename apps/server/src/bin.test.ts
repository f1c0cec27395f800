/**
 * `npx tidewire-server`: npm links the package's bin at install time, before the build, so the
 * linked file must exist in a fresh clone. This runs the linked command from the repository root.
 */

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('the tidewire-server command', () => {
  it('is linked by npm install and prints its flags', () => {
    const r = spawnSync('npx', ['--no-install', 'tidewire-server', '--help'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).not.toContain('404');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('Usage: tidewire-server');
    expect(r.stdout).toContain('--journal-dir');
  }, 70_000);
});
