import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { Connection } from './connection/connection.js';
import { ConnectionProvider } from './connection/ConnectionProvider.js';
import { SERVERS_PARAM, streamUrl, streamUrls } from './connection/stream-url.js';
import './styles/app.css';

const root = document.getElementById('root');
if (root === null) throw new Error('index.html must contain <div id="root">');

/**
 * The servers of the tab: the origin that served the app first, then the other nodes of a cluster
 * from the page's `?servers=` and the build's `VITE_TIDEWIRE_SERVERS` (comma-separated); the SDK
 * fails over along this list. A bad entry is reported and the list falls back to the origin.
 */
function serverUrls(): string[] {
  const query = new URLSearchParams(window.location.search).get(SERVERS_PARAM) ?? undefined;
  try {
    return streamUrls(window.location, query, import.meta.env.VITE_TIDEWIRE_SERVERS as string | undefined);
  } catch (error) {
    console.error(`tidewire: ${(error as Error).message}; using only ${streamUrl(window.location)}`);
    return [streamUrl(window.location)];
  }
}

/** localStorage when the browser allows it (private modes may refuse). */
function localStore(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

// One connection for the whole tab.
const connection = new Connection({ urls: serverUrls(), storage: window.sessionStorage, prefsStorage: localStore() });
// a reload keeps the session: log in again with the token this tab stored
void connection.resume();

createRoot(root).render(
  <StrictMode>
    <ConnectionProvider connection={connection}>
      <App />
    </ConnectionProvider>
  </StrictMode>,
);
