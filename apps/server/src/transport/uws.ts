/**
 * Loads uWebSockets.js and proves the native build loaded. The package silently falls back to
 * a slow pure-JS implementation when its binary does not match the Node ABI; Tidewire refuses
 * to run on it (its performance model depends on the native server).
 */

import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/** The uWebSockets.js module type. */
export type UwsModule = typeof UWS;

let loaded: UwsModule | undefined;

/**
 * Returns the native uWebSockets.js module.
 * @throws Error naming the platform, arch and Node ABI when only the JS fallback is available.
 */
export function loadUws(): UwsModule {
  if (loaded) return loaded;
  const mod = require('uWebSockets.js') as UwsModule;
  const entry = require.resolve('uWebSockets.js');
  const nativeLoaded = Object.keys(require.cache).some((k) => k.endsWith('.node') && k.includes('uws_') && k.startsWith(entry.slice(0, entry.lastIndexOf('src'))));
  // the fallback lacks the native-only helpers below
  const nativeApi = typeof mod.App === 'function' && typeof (mod as unknown as Record<string, unknown>).getParts === 'function';
  if (!nativeLoaded || !nativeApi) {
    throw new Error(
      `uWebSockets.js native build did not load for ${process.platform}-${process.arch} (Node ABI ${process.versions.modules}); ` +
        'refusing the slow JS fallback. Use a Node version the package ships binaries for (e.g. Node 20 or 22).',
    );
  }
  loaded = mod;
  return mod;
}
