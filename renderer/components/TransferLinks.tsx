// The Links of a sent transfer (link management): each with how often it was
// opened against its limit, its expiry and whether it asks a password; copy,
// revoke (asked once more), and a new Link with options of its own.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { UploadLinkEntry } from '../../src/api/agent/uploads.js';
import { useApp } from '../store/context.js';

const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

/** "2 of 5", or "2" without a limit; "(limit reached)" once the limit is used up. */
function opened(l: UploadLinkEntry): string {
  if (l.access_limit === null) return `${l.access_count} · no limit`;
  return `${l.access_count} of ${l.access_limit}${l.access_count >= l.access_limit ? ' (limit reached)' : ''}`;
}

function NewLink({ uploadId, made }: { uploadId: string; made: (url: string) => void }) {
  const call = useApp((s) => s.call);
  const [limit, setLimit] = useState('');
  const [expiry, setExpiry] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    // The end of the chosen day, where the person is.
    const until = expiry ? new Date(`${expiry}T23:59:59`).toISOString() : null;
    const r = await call('uploads.link', { upload_id: uploadId, access_limit: limit ? Number(limit) : null, expiry: until, ...(password ? { password } : {}) });
    if (!r.ok) return setError(r.error.message);
    setError(undefined);
    setLimit('');
    setExpiry('');
    setPassword('');
    made(r.value.url);
  };
  return (
    <form className="new-link" aria-label="New link" onSubmit={submit}>
      <p className="muted">Another link for this transfer, with a limit, expiry and password of its own:</p>
      <label>Download limit<input type="number" min={1} value={limit} onChange={(e) => setLimit(e.target.value)} placeholder="No limit" /></label>
      <label>Expires on<input type="date" value={expiry} onChange={(e) => setExpiry(e.target.value)} /></label>
      <label>Password<input type="password" value={password} onChange={(e) => setPassword(e.target.value)} placeholder="Same as the transfer" autoComplete="new-password" /></label>
      <button type="submit">New link</button>
      {error && <p className="error" role="alert">{error}</p>}
    </form>
  );
}

export function TransferLinks({ uploadId, name }: { uploadId: string; name: string }) {
  const call = useApp((s) => s.call);
  const [links, setLinks] = useState<UploadLinkEntry[]>();
  const [note, setNote] = useState<string>();
  const [asking, setAsking] = useState<string>();
  // Where focus goes once the question about revoking is answered (its buttons are gone then).
  const heading = useRef<HTMLHeadingElement>(null);
  const answered = () => {
    setAsking(undefined);
    heading.current?.focus();
  };
  const load = async () => {
    const r = await call('uploads.links', { upload_id: uploadId });
    if (r.ok) setLinks(r.value);
    else setNote(r.error.message);
  };
  useEffect(() => {
    void load();
  }, [uploadId]);
  const copy = async (url: string, what: string) => {
    await navigator.clipboard?.writeText(url).catch(() => undefined);
    setNote(`${what}: ${url}`);
  };
  const revoke = async (id: string) => {
    answered();
    const r = await call('uploads.revokeLink', { upload_id: uploadId, link_id: id });
    setNote(r.ok ? 'Link revoked: it no longer opens.' : r.error.message);
    await load();
  };
  return (
    <section className="links" aria-label={`Links of ${name}`}>
      <h2 ref={heading} tabIndex={-1}>Links</h2>
      {links === undefined ? (
        <p className="muted">Loading the links…</p>
      ) : links.length === 0 ? (
        <p className="muted">No links yet: "Copy link" makes this transfer's link, or make one with its own options below.</p>
      ) : (
        <table className="files link-list">
          <thead><tr><th scope="col">Link</th><th scope="col">Opened</th><th scope="col">Expires</th><th scope="col">Password</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {links.map((l) => {
              const label = `${l.transfer ? "This transfer's link" : 'Link'} made ${day(l.created_at)}`;
              return (
                <tr key={l.id} aria-label={label}>
                  <td>{label}{l.active ? '' : ' · no longer opens'}</td>
                  <td className="size">{opened(l)}</td>
                  <td>{l.expiry ? day(l.expiry) : 'With the transfer'}</td>
                  <td>{l.locked ? 'Yes' : 'No'}</td>
                  <td className="link-actions">
                    {asking === l.id ? (
                      <>
                        <span>Revoke it? It stops opening for everyone.</span>
                        <button type="button" className="danger" onClick={() => void revoke(l.id)}>Revoke</button>
                        <button type="button" autoFocus onClick={answered}>Keep</button>
                      </>
                    ) : (
                      <>
                        <button type="button" disabled={!l.url} title={l.url ? undefined : 'Made elsewhere: its address is known only to whoever made it'}
                          aria-label={`Copy ${label}`} onClick={() => l.url && void copy(l.url, 'Link copied')}>Copy</button>
                        <button type="button" aria-label={`Revoke ${label}`} onClick={() => setAsking(l.id)}>Revoke</button>
                      </>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {note && <p className="note" role="status">{note}</p>}
      <NewLink uploadId={uploadId} made={(url) => void copy(url, 'New link made and copied').then(load)} />
    </section>
  );
}
