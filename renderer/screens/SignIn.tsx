// First run: sign in to the service the agent uses, with an e-mail and password or an API key.
import { useState, type FormEvent } from 'react';
import { useApp } from '../store/context.js';

export function SignIn() {
  const signIn = useApp((s) => s.signIn);
  const signInWithKey = useApp((s) => s.signInWithKey);
  const [withKey, setWithKey] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(await (withKey ? signInWithKey(key) : signIn(email, password)));
    setBusy(false);
  };

  return (
    <main className="center">
      <form className="card signin" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Use a server</h1>
        <p className="muted">Sign in to the Ferry server this agent sends through.</p>
        {withKey ? (
          <label>
            API key
            <input value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" required />
          </label>
        ) : (
          <>
            <label>
              Email
              <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username" required />
            </label>
            <label>
              Password
              <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" required aria-describedby={error ? 'signin-error' : undefined} />
            </label>
          </>
        )}
        {error && (
          <p className="error" id="signin-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
        <button type="button" className="link" onClick={() => setWithKey(!withKey)}>
          {withKey ? 'Use an email and password instead' : 'Use an API key instead'}
        </button>
      </form>
    </main>
  );
}
