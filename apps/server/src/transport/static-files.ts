/**
 * Serves the built web app: files under the web root, `index.html` for client-side routes,
 * content types by extension, long-lived caching for hashed assets (`name-<hash>.js`) and
 * `no-cache` for the rest. No uWS here: `lookup` returns what to send.
 */

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** A response to send. */
export interface StaticResponse {
  status: '200 OK' | '404 Not Found';
  headers: Array<[string, string]>;
  body: Buffer;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif',
  '.ico': 'image/x-icon', '.webp': 'image/webp', '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8', '.webmanifest': 'application/manifest+json', '.wasm': 'application/wasm',
};

/** Vite's hashed asset names: `index-BxY1z_3k.js`, `logo-3f2a9c1d.svg`. */
const HASHED = /[-.][A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

interface Cached {
  mtimeMs: number;
  size: number;
  body: Buffer;
}

/** Static file server for one web root. */
export class StaticFiles {
  private readonly root: string;
  private readonly cache = new Map<string, Cached>();

  /** `root`: absolute directory of the built web app (may not exist yet: then every lookup is a 404). */
  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /**
   * The response for a GET of `urlPath` (no query string). Paths escaping the root and
   * missing files with an extension are 404; paths without an extension fall back to index.html.
   */
  lookup(urlPath: string): StaticResponse {
    let decoded: string;
    try {
      decoded = decodeURIComponent(urlPath);
    } catch {
      return this.notFound('bad URL encoding');
    }
    if (decoded.includes('\0')) return this.notFound('bad path');
    const rel = path.posix.normalize(decoded).replace(/^(\.\.(\/|$))+/, '');
    const file = path.join(this.root, rel);
    if (file !== this.root && !file.startsWith(this.root + path.sep)) return this.notFound('outside the web root');
    const hit = this.read(file.endsWith(path.sep) || file === this.root ? path.join(file, 'index.html') : file) ?? this.readDirIndex(file);
    if (hit) return this.ok(hit.file, hit.body);
    if (path.extname(rel) !== '') return this.notFound(`no file ${rel}`);
    const index = this.read(path.join(this.root, 'index.html'));
    if (!index) return this.notFound(`web app not built: ${path.join(this.root, 'index.html')} is missing (npm run build -w apps/web)`);
    return this.ok(index.file, index.body);
  }

  private readDirIndex(dir: string): { file: string; body: Buffer } | undefined {
    return this.read(path.join(dir, 'index.html'));
  }

  private read(file: string): { file: string; body: Buffer } | undefined {
    let st;
    try {
      st = statSync(file);
    } catch {
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) return { file, body: cached.body };
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch {
      return undefined;
    }
    this.cache.set(file, { mtimeMs: st.mtimeMs, size: st.size, body });
    return { file, body };
  }

  private ok(file: string, body: Buffer): StaticResponse {
    const ext = path.extname(file).toLowerCase();
    const base = path.basename(file);
    const immutable = base !== 'index.html' && HASHED.test(base) && file.includes(`${path.sep}assets${path.sep}`);
    return {
      status: '200 OK',
      headers: [
        ['Content-Type', TYPES[ext] ?? 'application/octet-stream'],
        ['Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache'],
        ['X-Content-Type-Options', 'nosniff'],
      ],
      body,
    };
  }

  private notFound(message: string): StaticResponse {
    return {
      status: '404 Not Found',
      headers: [['Content-Type', 'application/json; charset=utf-8'], ['Cache-Control', 'no-cache']],
      body: Buffer.from(JSON.stringify({ error: 'NOT_FOUND', message })),
    };
  }
}
