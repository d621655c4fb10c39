// Receive: a Link (and its password), where to put it; "Show files" says what the
// receive will fetch (PackagePreview.tsx) and which files; then Download.
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type { LinkPreview, PreviewFile } from '../../src/api/agent/downloads.js';
import { useApp } from '../store/context.js';
import { FolderField } from '../components/FolderField.js';
import { bytes } from '../format.js';
import { PackageFiles, PackageSummary, filesWord, pickTotals, type FilePick } from '../components/PackagePreview.js';
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
  // The preview's files loaded so far, and the cursor of the next page (null: all loaded).
  const [files, setFiles] = useState<PreviewFile[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [moreError, setMoreError] = useState<string>();
  const [pick, setPick] = useState<FilePick>({ all: true });
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
    setFiles(r.value.files);
    setNext(r.value.next);
    setMoreError(undefined);
    setPick({ all: true });
  };

  /** The next page of the preview's files. */
  const more = useCallback(async () => {
    if (!next || loading) return;
    setLoading(true);
    const r = await call('downloads.previewFiles', { url: url.trim(), ...(password ? { password } : {}), after: next });
    setLoading(false);
    if (!r.ok) return setMoreError(`The next files could not be loaded: ${r.error.message}`);
    setMoreError(undefined);
    setFiles((have) => [...have, ...r.value.files]);
    setNext(r.value.next);
  }, [call, url, password, next, loading]);
  const onMore = useCallback(() => void more(), [more]);

  const download = async (e: FormEvent) => {
    e.preventDefault();
    const r = await call('downloads.create', {
      url: url.trim(),
      dst_folder: dst,
      ...(password ? { password } : {}),
      ...(preview && !pick.all ? { file_ids: [...pick.ids] } : {}),
      create_package_folder: packageFolder,
    });
    if (!r.ok) return setError(r.error.field && r.error.field !== 'url' ? r.error : linkProblem(r.error, password));
    go('transfers');
  };

  const chosen = preview ? pickTotals(pick, preview, files) : { count: 0, size: 0 };
  const why = !url.trim() ? 'Paste a Link first.' : !dst ? 'Choose a destination folder.' : preview && chosen.count === 0 ? 'Select at least one file.' : undefined;

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
            <PackageFiles
              preview={preview}
              files={files}
              more={{ left: next !== null, loading, ...(moreError ? { error: moreError } : {}) }}
              onMore={onMore}
              pick={pick}
              onPick={setPick}
            />
          </section>
        )}
        <label className="inline">
          <input type="checkbox" checked={packageFolder} onChange={(e) => setPackageFolder(e.target.checked)} /> Create package folder
        </label>
        <FormProblem problem={error} placed={PLACED} />
        <div className="form-foot">
          <button type="submit" className="primary" disabled={why !== undefined} aria-describedby="receive-why">
            {preview && chosen.count > 0 ? `Download ${filesWord(chosen.count)}, ${bytes(chosen.size)}` : 'Download'}
          </button>
          {why && <span id="receive-why" className="muted">{why}</span>}
        </div>
      </form>
    </section>
  );
}
