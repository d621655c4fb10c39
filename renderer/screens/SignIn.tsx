// First run: use a server (its address, then an e-mail and password or an API
// key), or try Ferry on this computer: the agent runs a service beside it and
// signs in as its owner. A problem shows beside the field that can fix it (an
// empty field, a server that is no address, one that cannot be reached, a wrong
// password), else at the form's foot.
import { useEffect, useState, type FormEvent } from 'react';
import { useApp } from '../store/context.js';
import { FieldProblem, FormProblem, invalidProps, type Problem } from '../components/FieldProblem.js';

/** The fields of the sign-in form a problem shows beside. */
const PLACED = ['server', 'email', 'password', 'api_key'] as const;

/** What is missing before anything is sent, if anything. */
function missing(withKey: boolean, server: string, email: string, password: string, key: string, serverNeeded: boolean): Problem | undefined {
  if (serverNeeded && !server.trim()) return { message: "Give the server's address, like https://ferry.example.com.", field: 'server' };
  if (withKey) return key.trim() ? undefined : { message: 'Give the API key.', field: 'api_key' };
  if (!email.trim()) return { message: 'Give your email.', field: 'email' };
  if (!/^[^\s@]+@[^\s@]+$/.test(email.trim())) return { message: `"${email.trim()}" is not an email address.`, field: 'email' };
  if (!password) return { message: 'Give your password.', field: 'password' };
  return undefined;
}

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
  const [error, setError] = useState<Problem>();
  const [tryError, setTryError] = useState<string>();
  const [busy, setBusy] = useState<'sign-in' | 'this-computer'>();
  const serverLocked = settings?.locked.hosted_url !== undefined && !settings.this_computer;
  // The server the agent uses, once known; a service on this computer is not one to type.
  useEffect(() => {
    if (settings && !settings.this_computer) setServer((s) => s || settings.hosted_url);
  }, [settings]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTryError(undefined);
    // Empty means the service on this computer when the agent uses it.
    const problem = missing(withKey, server, email, password, key, !serverLocked && !settings?.this_computer);
    if (problem) return setError(problem);
    setBusy('sign-in');
    setError(undefined);
    setError(await (withKey ? signInWithKey(key.trim(), server) : signIn(email.trim(), password, server)));
    setBusy(undefined);
  };
  const tryHere = async () => {
    setBusy('this-computer');
    setError(undefined);
    setTryError(undefined);
    setTryError((await tryThisComputer())?.message);
    setBusy(undefined);
  };
  const serverNotes = [serverLocked ? 'server-locked' : undefined].filter(Boolean).join(' ') || undefined;

  return (
    <main className="center">
      <div className="signin-choices">
        <form className="card signin" onSubmit={submit} aria-labelledby="signin-title" noValidate>
          <h1 id="signin-title">Use a server</h1>
          <p className="muted">Sign in to the Ferry server you send through.</p>
          <label>
            Server
            <input type="url" value={server} onChange={(e) => setServer(e.target.value)} placeholder="https://ferry.example.com" required readOnly={serverLocked}
              autoComplete="url" {...invalidProps(error, ['server'], 'signin-server-problem', serverNotes)} />
          </label>
          {serverLocked && <p className="muted small" id="server-locked">Fixed: {settings!.locked.hosted_url}.</p>}
          <FieldProblem problem={error} names={['server']} id="signin-server-problem" />
          {withKey ? (
            <>
              <label>
                API key
                <input value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" required {...invalidProps(error, ['api_key'], 'signin-key-problem')} />
              </label>
              <FieldProblem problem={error} names={['api_key']} id="signin-key-problem" />
            </>
          ) : (
            <>
              <label>
                Email
                <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username" required {...invalidProps(error, ['email'], 'signin-email-problem')} />
              </label>
              <FieldProblem problem={error} names={['email']} id="signin-email-problem" />
              <label>
                Password
                <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" required {...invalidProps(error, ['password'], 'signin-password-problem')} />
              </label>
              <FieldProblem problem={error} names={['password']} id="signin-password-problem" />
            </>
          )}
          <p className="switch">
            <button type="button" className="link" onClick={() => (setWithKey(!withKey), setError(undefined))}>
              {withKey ? 'Use an email and password instead' : 'Use an API key instead'}
            </button>
          </p>
          <FormProblem problem={error} placed={PLACED} />
          <div className="form-foot">
            <button type="submit" className="primary" disabled={busy !== undefined}>
              {busy === 'sign-in' ? 'Signing in…' : 'Sign in'}
            </button>
          </div>
        </form>
        <section className="card signin" aria-labelledby="try-title">
          <h2 id="try-title">No server yet?</h2>
          <p className="muted">Run one on this computer and send with it right away. You can move to a shared server later, in Settings.</p>
          {tryError && <p className="error" role="alert">{tryError}</p>}
          <div className="form-foot">
            <button type="button" onClick={() => void tryHere()} disabled={busy !== undefined}>
              {busy === 'this-computer' ? 'Starting a server on this computer…' : 'Try it on this computer'}
            </button>
          </div>
        </section>
      </div>
    </main>
  );
}
