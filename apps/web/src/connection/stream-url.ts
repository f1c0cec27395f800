/** Where the web app finds the server's WebSocket endpoint. */

/** The part of `window.location` the URL is derived from. */
export interface LocationLike {
  protocol: string;
  host: string;
}

/** Path of the client WebSocket endpoint on the server that served the app. */
export const STREAM_PATH = '/stream';

/**
 * `ws://host/stream` for a page served over http, `wss://host/stream` over https: the server
 * serves the app and the WebSocket on the same origin (the Vite dev server proxies `/stream`).
 * Throws a TypeError naming the value for a location that is not http(s) (e.g. `file:`).
 */
export function streamUrl(location: LocationLike): string {
  if (location.protocol !== 'http:' && location.protocol !== 'https:') {
    throw new TypeError(`'location.protocol' (${JSON.stringify(location.protocol)}) must be "http:" or "https:"`);
  }
  if (location.host === '') throw new TypeError("'location.host' must not be empty");
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${STREAM_PATH}`;
}

/** Query parameter of the page naming further servers: `?servers=node-b:8080,wss://node-c/stream`. */
export const SERVERS_PARAM = 'servers';

/**
 * One entry of a server list as a stream URL: `ws(s)://host[:port][/path]` as given,
 * `http(s)://host[:port]` as `ws(s)://host[:port]/stream`, a bare `host[:port]` with the page's
 * scheme. Throws a TypeError naming the entry when it is none of these.
 */
export function serverEntryUrl(entry: string, pageProtocol: 'http:' | 'https:'): string {
  const e = entry.trim();
  const ws = pageProtocol === 'https:' ? 'wss:' : 'ws:';
  if (/^wss?:\/\/[^\s/]+(\/\S*)?$/.test(e)) return /^wss?:\/\/[^/]+$/.test(e) ? `${e}${STREAM_PATH}` : e;
  const http = /^(https?):\/\/([^\s/]+)\/?$/.exec(e);
  if (http) return `${http[1] === 'https' ? 'wss:' : 'ws:'}//${http[2]}${STREAM_PATH}`;
  if (/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(e) || /^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(e)) return `${ws}//${e}${STREAM_PATH}`;
  throw new TypeError(`server ${JSON.stringify(entry)} must be host:port, http(s)://host:port or ws(s)://host:port/stream`);
}

/**
 * Every server the app may use, in the order the SDK tries them: the one that served the page
 * (streamUrl()) first, then the comma-separated lists `lists` (the page's `?servers=` and the
 * build's `VITE_TIDEWIRE_SERVERS`), without repeats. Empty lists add nothing. Throws a TypeError
 * naming the first bad entry.
 */
export function streamUrls(location: LocationLike, ...lists: ReadonlyArray<string | undefined>): string[] {
  const own = streamUrl(location);
  const urls = [own];
  for (const list of lists) {
    for (const entry of (list ?? '').split(',')) {
      if (entry.trim() === '') continue;
      const url = serverEntryUrl(entry, location.protocol as 'http:' | 'https:');
      if (!urls.includes(url)) urls.push(url);
    }
  }
  return urls;
}
