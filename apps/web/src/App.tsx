import { useConnectionSnapshot } from './connection/hooks.js';
import { LoginPage } from './features/login/LoginPage.js';
import { AppShell } from './features/shell/AppShell.js';

/** Login page until a session exists, then the app shell. */
export function App() {
  const { phase } = useConnectionSnapshot();
  return phase === 'loggedIn' ? <AppShell /> : <LoginPage />;
}
