// Receive: a Link (and its password), where to put it; "Show files" says what the
// receive will fetch (PackagePreview.tsx) and which files; then Download.
import { useEffect, useState, type FormEvent } from 'react';
import type { LinkPreview } from '../../src/api/agent/downloads.js';
import { useApp } from '../store/context.js';
import { FolderField } from '../components/FolderField.js';
import { bytes } from '../format.js';
import { PackageFiles, PackageSummary, filesWord } from '../components/PackagePreview.js';
import { FieldProblem, FormProblem, invalidProps, type Problem } from '../components/FieldProblem.js';
import { AgentErrorCode } from '../../src/api/agent/errors.js';

/** The fields of downloads.create this form shows a problem beside. */
const PLACED = ['url', 'password', 'dst_folder'] as const;

/**
 * A Link the agent could not open, in words, beside the field that can fix it:
 * the password when one is asked for (or wrong), else the Link.
 */
function linkProblem(e: { code: number; message: string; field?: string }, password: string): Problem {
  if (e.message.startsWith('the Link needs a password')) {
    return { field: 'password', message: password ? 'Wrong password for this Link. Try again.' : 'This Link needs a password. Enter it, then Show files.' };
  }
  if (e.code === AgentErrorCode.upstream) return { field: 'url', message: "The Link's server cannot be reached. Check the Link and your connection, then try again." };
  return { field: e.field ?? 'url', message: e.message };
}

export function Receive() {
  const call = useApp((s) => s.call);
  const go = useApp((s) => s.go);
  const link = useApp((s) => s.link);
  const keepLink = useApp((s) => s.keepLink);
  // The Link lives in the store (never in the address): Back to Receive finds it again.
  const url = link ?? '';
  const setUrl = keepLink;
  const [password, setPassword] = useState('');
  const [dst, setDst] = useState('');
  const [preview, setPreview] = useState<LinkPreview>();
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [packageFolder, setPackageFolder] = useState(true);
  /** What the last Show files or Download said; another Link clears it, with the files shown. */
  const [error, setError] = useState<Problem>();
  useEffect(() => {
    setError(undefined);
    setPreview(undefined);
  }, [url]);

  const show = async () => {
    const r = await call('downloads.preview', { url: url.trim(), ...(password ? { password } : {}) });
    if (!r.ok) {
      setPreview(undefined);
      return setError(linkProblem(r.error, password));
    }
    setError(undefined);
    setPreview(r.value);
    setPicked(new Set(r.value.files.map((f) => f.file_id)));
  };

  const download = async (e: FormEvent) => {
    e.preventDefault();
    const r = await call('downloads.create', {
      url: url.trim(),
      dst_folder: dst,
      ...(password ? { password } : {}),
      ...(preview && picked.size < preview.files.length ? { file_ids: [...picked] } : {}),
      create_package_folder: packageFolder,
    });
    if (!r.ok) return setError(r.error.field && r.error.field !== 'url' ? r.error : linkProblem(r.error, password));
    go('transfers');
  };

  const chosenSize = preview ? preview.files.reduce((sum, f) => (picked.has(f.file_id) ? sum + f.size : sum), 0) : 0;
  const why = !url.trim() ? 'Paste a Link first.' : !dst ? 'Choose a destination folder.' : preview && picked.size === 0 ? 'Select at least one file.' : undefined;

  return (
    <section aria-labelledby="place-title">
      <h1 id="place-title">Receive</h1>
      <form className="receive" onSubmit={download}>
        <label>
          Link
          <input value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://…/l/…?secret=…" spellCheck={false} {...invalidProps(error, ['url'], 'receive-url-problem')} />
        </label>
        <FieldProblem problem={error} names={['url']} id="receive-url-problem" />
        <label>
          Password
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} {...invalidProps(error, ['password'], 'receive-password-problem')} />
        </label>
        <FieldProblem problem={error} names={['password']} id="receive-password-problem" />
        <FolderField label="Destination folder" value={dst} onChange={setDst} {...(error?.field === 'dst_folder' ? { describedBy: 'receive-dst-problem', invalid: true } : {})} />
        <FieldProblem problem={error} names={['dst_folder']} id="receive-dst-problem" />
        <div className="row-buttons">
          <button type="button" onClick={() => void show()} disabled={!url.trim()}>Show files</button>
        </div>
        {preview && (
          <section className="package-preview" aria-label="What this Link holds">
            <PackageSummary preview={preview} />
            <PackageFiles preview={preview} picked={picked} onPick={setPicked} />
          </section>
        )}
        <label className="inline">
          <input type="checkbox" checked={packageFolder} onChange={(e) => setPackageFolder(e.target.checked)} /> Create package folder
        </label>
        <FormProblem problem={error} placed={PLACED} />
        <div className="form-foot">
          <button type="submit" className="primary" disabled={why !== undefined} aria-describedby="receive-why">
            {preview && picked.size > 0 ? `Download ${filesWord(picked.size)}, ${bytes(chosenSize)}` : 'Download'}
          </button>
          {why && <span id="receive-why" className="muted">{why}</span>}
        </div>
      </form>
    </section>
  );
}
