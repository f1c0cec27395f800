import { useState, type FormEvent } from 'react';
import { useConnection } from '../../connection/ConnectionProvider.js';
import { useConnectionSnapshot } from '../../connection/hooks.js';

/**
 * User/password form; shows the server's error (e.g. BAD_CREDENTIALS) when a login fails, or a
 * plain sentence of ours (a refused stored token: "Your session has expired...").
 */
export function LoginPage() {
  const connection = useConnection();
  const { phase, loginError } = useConnectionSnapshot();
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const busy = phase === 'loggingIn';

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (busy || user.trim() === '' || password === '') return;
    void connection.login(user.trim(), password);
  };

  return (
    <main className="login">
      <form className="login-card" onSubmit={submit} aria-labelledby="login-title" data-testid="login-form">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true" />
          <span>Tidewire</span>
        </div>
        <h1 id="login-title" className="login-title">Sign in to the trading desk</h1>
        <label className="field">
          <span>User</span>
          <input
            name="user"
            autoComplete="username"
            autoFocus
            value={user}
            onChange={(e) => setUser(e.target.value)}
            disabled={busy}
            data-testid="login-user"
          />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            disabled={busy}
            data-testid="login-password"
          />
        </label>
        {loginError !== undefined && (
          <p className="login-error" role="alert" data-testid="login-error">
            {loginError.plain === true ? loginError.message : (
              <>
                <strong>{loginError.code}</strong> {loginError.message}
              </>
            )}
          </p>
        )}
        <button type="submit" className="button-primary" disabled={busy || user.trim() === '' || password === ''} data-testid="login-submit">
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
