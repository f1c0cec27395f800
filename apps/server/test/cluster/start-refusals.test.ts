/**
 * A node started in cluster mode without a shared token secret refuses to start (exit 2, one
 * line saying what to set) before it connects anywhere: the NATS URL here has nothing behind it.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { mainBuilt } from '../built.js';
import { runChildServerToExit } from '../child-server.js';
import { removeTempDirs, tempDir } from '../helpers.js';

afterAll(removeTempDirs);

describe.runIf(mainBuilt())('cluster mode start-up refusals', () => {
  it('without a token secret: exit 2 naming the settings to give', async () => {
    const { code, lines } = await runChildServerToExit(['--no-demo', '--cluster', 'nats://127.0.0.1:1', '--journal-dir', tempDir('tidewire-refusal-journal-')]);
    expect(code).toBe(2);
    expect(lines).toContain(
      'tidewire: bad configuration: cluster mode (cluster.urls) needs a token secret shared by every node: set auth.tokenSecretFile (--token-secret-file, TIDEWIRE_TOKEN_SECRET_FILE) ' +
        'or auth.tokenSecret to the same secret on each node; with a secret generated per start each node would refuse the tokens of the others',
    );
  });

  it('with an unreadable secret file: exit 2 naming the file', async () => {
    const missing = `${tempDir('tidewire-refusal-secret-')}/missing`;
    const { code, lines } = await runChildServerToExit(['--no-demo', '--cluster', 'nats://127.0.0.1:1', '--token-secret-file', missing]);
    expect(code).toBe(2);
    expect(lines.some((l) => l.startsWith(`tidewire: bad configuration: auth.tokenSecretFile ${missing}: cannot read (ENOENT`))).toBe(true);
  });
});
