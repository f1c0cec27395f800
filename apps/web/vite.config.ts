import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** Resolves a path relative to this file. */
const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));

/** Where the dev server forwards `/stream` (WebSocket) and `/api`: the server's default address. */
const DEV_BACKEND = 'http://127.0.0.1:8080';

/**
 * Vite config for the Tidewire web app. `npm run build -w @tidewire/web` writes `dist/`, which the
 * server serves at `/`. The workspace packages are bundled from their TypeScript sources (why: the
 * web build must not depend on `tsc -b` having emitted `packages/*\/dist` first).
 */
export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: {
      '@tidewire/client': here('../../packages/client/src/index.ts'),
      '@tidewire/protocol': here('../../packages/protocol/src/index.ts'),
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2000,
  },
  server: {
    host: '127.0.0.1',
    proxy: {
      '/stream': { target: DEV_BACKEND, ws: true, changeOrigin: true },
      '/api': { target: DEV_BACKEND, changeOrigin: true },
    },
  },
});
