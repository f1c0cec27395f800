#!/usr/bin/env node
// `npx tidewire-loadgen`: the command's entry. It is committed (not built) so that npm links it at
// install time, before `npm run build` has written dist/; the CLI itself is dist/cli.js.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('tidewire-loadgen: not built yet (no packages/loadgen/dist/cli.js); run `npm run build` at the repository root\n');
  process.exit(1);
}
await import(cli.href);
