// `npm start`: install, build what is stale, run the server with the embedded demo feed.
// Extra arguments pass through: `npm start -- --port 9000 --no-demo`.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildAll } from './build.mjs';
import { root } from './lib.mjs';

buildAll();
// the demo's FIX acceptor (docs/fix.md); flags given after `--` win (`npm start -- --fix-port 0`)
const demoFix = ['--fix-port', '9878', '--fix-demo-sessions'];
const child = spawn(process.execPath, [join(root, 'apps/server/dist/main.js'), ...demoFix, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
