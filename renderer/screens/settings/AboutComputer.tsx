// Settings' "About this computer": the agent's diagnostics in a few lines
// (versions, the service and the store answering and how fast, free space
// where Ferry writes, recent problems), "Check again", and "Make a support
// bundle", which says where the ZIP was saved (and, in the desktop app, offers
// to show it in its folder). docs/agent-api-notes/diagnostics.md.
import { useCallback, useEffect, useState } from 'react';
import { useApp } from '../../store/context.js';
import { bytes } from '../../format.js';
import type { BundleAnswer, Diagnostics, Reach } from '../../../src/api/agent/diagnostics.js';

/** One probe in words: "reachable in 12 ms", "no answer within the time allowed", "unreachable (ECONNREFUSED…)". */
export function reachWords(r: Reach): string {
  if (r.reachable) return `reachable in ${Math.max(1, Math.round(r.latency_ms ?? 0))} ms`;
  return r.timed_out ? 'no answer within 3 seconds' : `unreachable (${r.error ?? 'no answer'})`;
}

export function AboutComputer() {
  const call = useApp((s) => s.call);
  const transport = useApp((s) => s.transport);
  const [facts, setFacts] = useState<Diagnostics>();
  const [checking, setChecking] = useState(false);
  const [checkError, setCheckError] = useState<string>();
  const [making, setMaking] = useState(false);
  const [bundle, setBundle] = useState<BundleAnswer>();
  const [bundleError, setBundleError] = useState<string>();

  const check = useCallback(async () => {
    setChecking(true);
    const r = await call('diagnostics.get', {});
    setChecking(false);
    if (!r.ok) return setCheckError(`This computer could not be checked: ${r.error.message}`);
    setCheckError(undefined);
    setFacts(r.value);
  }, [call]);
  useEffect(() => void check(), [check]);

  const make = async () => {
    setMaking(true);
    setBundle(undefined);
    const r = await call('diagnostics.bundle', {});
    setMaking(false);
    if (!r.ok) return setBundleError(`The support bundle could not be made: ${r.error.message}`);
    setBundleError(undefined);
    setBundle(r.value);
  };

  const v = facts?.versions;
  const problems = facts?.recent_problems ?? [];
  const last = problems[problems.length - 1];
  return (
    <fieldset className="group about-computer" aria-busy={checking}>
      <legend>About this computer</legend>
      {facts && v ? (
        <dl className="facts">
          <dt>Ferry</dt>
          <dd>{v.agent}{v.app ? ` (app ${v.app.version}, Electron ${v.app.electron})` : ''}</dd>
          <dt>System</dt>
          <dd>{v.os}, {v.arch}; Node {v.node}</dd>
          <dt>Service</dt>
          <dd>{reachWords(facts.service)}</dd>
          <dt>Store</dt>
          <dd>
            {facts.stores.length === 0
              ? 'none used yet'
              : facts.stores.map((s) => <span key={s.url} className="about-line">{facts.stores.length > 1 ? `${s.url}: ` : ''}{reachWords(s)}</span>)}
          </dd>
          <dt>Free space</dt>
          <dd>
            {facts.disks.map((d) => (
              <span key={d.path} className="about-line">
                {d.path}: {d.free_bytes !== null ? `${bytes(d.free_bytes)} free` : d.timed_out ? 'no answer' : 'cannot be measured'}
              </span>
            ))}
          </dd>
          <dt>Recent problems</dt>
          <dd>{last ? `${problems.length}; the latest: ${last.message}${last.error ? ` (${last.error})` : ''}` : 'none'}</dd>
        </dl>
      ) : (
        <p className="muted" role={checkError ? 'alert' : undefined}>{checkError ?? 'Checking…'}</p>
      )}
      {facts && checkError && <p className="error" role="alert">{checkError}</p>}
      <div className="field-actions">
        <button type="button" onClick={() => void check()} disabled={checking}>{checking ? 'Checking…' : 'Check again'}</button>
        <button type="button" onClick={() => void make()} disabled={making}>{making ? 'Making the bundle…' : 'Make a support bundle'}</button>
      </div>
      <p className="muted small note">A support bundle is a ZIP of these facts, the settings and the agent's log, with keys and passwords removed, to send to whoever helps you.</p>
      {bundle && (
        <p className="saved-bundle" role="status">
          Saved to <code>{bundle.path}</code> ({bytes(bundle.size)}).{' '}
          {transport.desktop && (
            <button type="button" onClick={() => void transport.desktop!('app.showInFolder', { path: bundle.path })}>Show in folder</button>
          )}
        </p>
      )}
      {bundleError && <p className="error" role="alert">{bundleError}</p>}
    </fieldset>
  );
}
