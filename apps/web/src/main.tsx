import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { Connection } from './connection/connection.js';
import { ConnectionProvider } from './connection/ConnectionProvider.js';
import { streamUrl } from './connection/stream-url.js';
import './styles/app.css';

const root = document.getElementById('root');
if (root === null) throw new Error('index.html must contain <div id="root">');

// One connection for the whole tab; the WebSocket lives on the origin that served the app.
const connection = new Connection({ url: streamUrl(window.location), storage: window.sessionStorage });
// a reload keeps the session: log in again with the token this tab stored
void connection.resume();

createRoot(root).render(
  <StrictMode>
    <ConnectionProvider connection={connection}>
      <App />
    </ConnectionProvider>
  </StrictMode>,
);
