// An agent with an API key (set in Settings, or given where it was started) asks
// a browser for that key once; a cookie stands for it afterwards, so the key is
// not kept in the page. The page that set the key got its cookie then.
import { useState, type FormEvent } from 'react';
import { useApp } from '../store/context.js';

export function Unlock() {
  const transport = useApp((s) => s.transport);
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await transport.unlock!(key);
    if (!r.ok) return setError(r.error.message);
    location.reload();
  };
  return (
    <main className="center">
      <form className="card signin" onSubmit={submit} aria-labelledby="unlock-title">
        <h1 id="unlock-title">This agent is locked</h1>
        <p className="muted">
          It asks for its API key: one was set in Settings (Local API key), or the agent was started with one (ferry agent --api-key or --local-api-key).
          Enter it once to use the app in this browser.
        </p>
        <label>
          Agent API key
          <input type="password" value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" required aria-describedby={error ? 'unlock-error' : undefined} />
        </label>
        {error && <p className="error" id="unlock-error" role="alert">{error}</p>}
        <button type="submit" className="primary">Unlock</button>
      </form>
    </main>
  );
}
