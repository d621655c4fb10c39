// First run: use a server (its address, then an e-mail and password or an API
// key), or try Ferry on this computer: the agent runs a service beside it and
// signs in as its owner.
import { useEffect, useState, type FormEvent } from 'react';
import { useApp } from '../store/context.js';

export function SignIn() {
  const signIn = useApp((s) => s.signIn);
  const signInWithKey = useApp((s) => s.signInWithKey);
  const tryThisComputer = useApp((s) => s.tryThisComputer);
  const settings = useApp((s) => s.settings);
  const [withKey, setWithKey] = useState(false);
  const [server, setServer] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState<'sign-in' | 'this-computer'>();
  const serverLocked = settings?.locked.hosted_url !== undefined && !settings.this_computer;
  // The server the agent uses, once known; a service on this computer is not one to type.
  useEffect(() => {
    if (settings && !settings.this_computer) setServer((s) => s || settings.hosted_url);
  }, [settings]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy('sign-in');
    setError(undefined);
    setError(await (withKey ? signInWithKey(key, server) : signIn(email, password, server)));
    setBusy(undefined);
  };
  const tryHere = async () => {
    setBusy('this-computer');
    setError(undefined);
    setError(await tryThisComputer());
    setBusy(undefined);
  };

  return (
    <main className="center">
      <div className="signin-choices">
        <form className="card signin" onSubmit={submit} aria-labelledby="signin-title">
          <h1 id="signin-title">Use a server</h1>
          <p className="muted">Sign in to the Ferry server you send through.</p>
          <label>
            Server
            <input type="url" value={server} onChange={(e) => setServer(e.target.value)} placeholder="https://ferry.example.com" required readOnly={serverLocked}
              aria-describedby={serverLocked ? 'server-locked' : undefined} autoComplete="url" />
          </label>
          {serverLocked && <p className="muted small" id="server-locked">Fixed: {settings!.locked.hosted_url}.</p>}
          {withKey ? (
            <label>
              API key
              <input value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" required aria-describedby={error ? 'signin-error' : undefined} />
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
          <button type="submit" className="primary" disabled={busy !== undefined}>
            {busy === 'sign-in' ? 'Signing in…' : 'Sign in'}
          </button>
          <button type="button" className="link" onClick={() => setWithKey(!withKey)}>
            {withKey ? 'Use an email and password instead' : 'Use an API key instead'}
          </button>
        </form>
        <section className="card signin" aria-labelledby="try-title">
          <h2 id="try-title">No server yet?</h2>
          <p className="muted">Run one on this computer and send with it right away. You can move to a shared server later, in Settings.</p>
          <button type="button" onClick={() => void tryHere()} disabled={busy !== undefined}>
            {busy === 'this-computer' ? 'Starting a server on this computer…' : 'Try it on this computer'}
          </button>
        </section>
      </div>
    </main>
  );
}
