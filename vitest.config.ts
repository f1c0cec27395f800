import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Workspace packages resolve to their TypeScript sources in tests, so a test run never needs a
// prior `tsc` of its dependencies. The engine is a native addon: `npm run build` builds it first.
export default defineConfig({
  resolve: {
    alias: {
      '@tidewire/protocol': src('./packages/protocol/src/index.ts'),
      '@tidewire/client': src('./packages/client/src/index.ts'),
    },
  },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'apps/server/src/**/*.test.ts',
      'apps/server/test/**/*.test.ts',
      'apps/web/src/**/*.test.{ts,tsx}',
    ],
    exclude: ['**/node_modules/**', '**/dist/**', 'e2e/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // 2 cores: integration tests start real servers; keep parallelism modest and predictable.
    maxWorkers: 2,
  },
});
