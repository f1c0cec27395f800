/**
 * Temp directories for tests (a journal, an audit log, a config file): each is made under the OS
 * temp dir and removed by `removeTempDirs` in the test file's afterAll. Shared by the server's
 * and the loadgen's tests.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const tempDirs: string[] = [];

/** A fresh directory under the OS temp dir, removed by `removeTempDirs`. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}

/** Removes every directory `tempDir` made (a test file's afterAll). */
export function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
