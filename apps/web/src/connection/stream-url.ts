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
