#!/usr/bin/env node
// `npx tidewire-server`: the command's entry. It is committed (not built) so that npm links it at
// install time, before `npm run build` has written dist/; the server itself is dist/main.js.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('tidewire-server: not built yet (no apps/server/dist/main.js); run `npm run build` at the repository root, or `npm start`\n');
  process.exit(1);
}
await import(main.href);
