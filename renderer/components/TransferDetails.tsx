// A transfer's details: the speed of the last minutes (SVG, with axes) and
// its files with their progress, a page at a time; for a complete Team upload, its Links.
import { useEffect, useRef, useState } from 'react';
import { useApp } from '../store/context.js';
import type { Transfer } from '../store/index.js';
import type { IndexedDownloadItem, IndexedUploadItem } from '../../src/api/agent/transfers.js';
import { transferIdOf, transferName } from '../../src/ipc/transfers.js';
import { TransferLinks } from './TransferLinks.js';
import { bytes, speed, type Meter } from '../format.js';

/** Files shown at a time. */
const PAGE = 200;

/** Up to about four round speed ticks (in the unit the top speed reads in) from 0 to at least `top`. */
function speedTicks(top: number): number[] {
  let unit = 1;
  while (top / unit >= 1024) unit *= 1024;
  const rough = Math.max(top / unit / 3, 1e-9);
  const pow = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((m) => m * pow >= rough) ?? 10) * pow;
  const ticks: number[] = [];
  for (let v = 0; ticks.length === 0 || ticks.at(-1)! < top / unit - 1e-9; v += step) ticks.push(v);
  return ticks.map((v) => v * unit);
}

/** Time ticks back from now, as "now", "30 s", "2 min", spaced to give a few across `spanMs`. */
function timeTicks(spanMs: number): { ago: number; label: string }[] {
  const step = [10_000, 30_000, 60_000, 120_000].find((s) => spanMs / s <= 5) ?? 120_000;
  const out: { ago: number; label: string }[] = [];
  for (let ago = 0; ago <= spanMs; ago += step) out.push({ ago, label: ago === 0 ? 'now' : ago < 60_000 ? `${ago / 1000} s` : `${ago / 60_000} min` });
  return out;
}

/** The speed of the last minutes: a line over speed ticks (left) and minutes ago (below), drawn in the text's colours. */
function SpeedGraph({ meter }: { meter: Meter }) {
  const h = meter.history;
  if (h.length < 2) return <p className="muted">The speed graph starts once the transfer has run a few seconds.</p>;
  const w = 600, ht = 80;
  const t0 = h[0]!.t, t1 = h.at(-1)!.t, span = Math.max(1, t1 - t0);
  // At least 1 KiB/s at the top: a stalled transfer's flat line still gets a scale that reads.
  const ticks = speedTicks(Math.max(...h.map((p) => p.rate), 1024));
  const top = ticks.at(-1)! || 1;
  const y = (rate: number) => ht - (rate / top) * ht;
  const points = h.map((p) => `${(((p.t - t0) / span) * w).toFixed(1)},${y(p.rate).toFixed(1)}`).join(' ');
  const times = timeTicks(span);
  const peak = Math.max(...h.map((p) => p.rate));
  return (
    <figure className="graph">
      <div className="graph-plot">
        <div className="graph-y" aria-hidden="true">
          {ticks.map((v) => <span key={v} style={{ bottom: `${(v / top) * 100}%` }}>{speed(v)}</span>)}
        </div>
        <svg viewBox={`0 0 ${w} ${ht}`} role="img" aria-label={`Speed over the last ${Math.max(1, Math.round(span / 60_000))} min, up to ${speed(peak)}`} preserveAspectRatio="none">
          {ticks.map((v) => <line key={v} className="graph-rule" x1="0" x2={w} y1={y(v)} y2={y(v)} vectorEffect="non-scaling-stroke" />)}
          <polyline points={points} fill="none" stroke="currentColor" strokeWidth="2" vectorEffect="non-scaling-stroke" />
        </svg>
        <div className="graph-x" aria-hidden="true">
          {times.map((x) => <span key={x.ago} style={{ right: `${(x.ago / span) * 100}%` }}>{x.label}</span>)}
        </div>
      </div>
      <figcaption className="muted">Speed, the last {Math.max(1, Math.round(span / 60_000))} min; up to {speed(peak)}</figcaption>
    </figure>
  );
}

/** An upload's file and a download's entry alike: `path` is its place in the Package. */
type FileRow = Pick<IndexedUploadItem | IndexedDownloadItem, 'index' | 'path' | 'size' | 'progress' | 'state'>;

/** How often a page shown is read again while its transfer moves. */
const REFRESH_MS = 1000;

/** One page of the transfer's files, read from the agent (a transfer may hold a million), and read again as the transfer moves. */
function useFilesPage(t: Transfer, page: number): { rows: FileRow[] | undefined; problem: string | undefined } {
  const call = useApp((s) => s.call);
  const [rows, setRows] = useState<FileRow[]>();
  const [problem, setProblem] = useState<string>();
  const readAt = useRef(0);
  const id = transferIdOf(t);
  const moved = `${t.state}|${t.files_done}|${t.progress}|${t.file_count}`;
  useEffect(() => {
    let live = true;
    const load = async () => {
      readAt.current = Date.now();
      const after = page * PAGE - 1;
      const a = t.direction === 'upload'
        ? await call('uploads.files', { upload_id: id, after, limit: PAGE })
        : await call('downloads.files', { download_id: id, after, limit: PAGE });
      if (!live) return;
      // A page that could not be read leaves the last one shown, with the problem under it.
      if (a.ok) setRows(a.value.files);
      setProblem(a.ok ? undefined : a.error.message);
    };
    // The first read at once; while the transfer moves, at most one read a second.
    const wait = Math.max(0, readAt.current + REFRESH_MS - Date.now());
    const timer = setTimeout(() => void load(), rows === undefined ? 0 : wait);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, page, moved]);
  return { rows, problem };
}

function FilesTable({ t }: { t: Transfer }) {
  const [page, setPage] = useState(0);
  const { rows, problem } = useFilesPage(t, page);
  const count = t.file_count;
  const pages = Math.max(1, Math.ceil(count / PAGE));
  const first = page * PAGE;
  const range = count === 0 ? 'No files' : `Files ${(first + 1).toLocaleString()}–${Math.min(first + PAGE, count).toLocaleString()} of ${count.toLocaleString()}`;
  return (
    <>
      <table className="files">
        <caption className="muted">{range}</caption>
        <thead><tr><th scope="col">File</th><th scope="col">Size</th><th scope="col">Done</th><th scope="col">State</th></tr></thead>
        <tbody>
          {(rows ?? []).map((f) => (
            <tr key={f.index}>
              <td className="name path-tail" title={f.path}><bdi dir="ltr">{f.path}</bdi></td>
              <td className="size">{bytes(f.size)}</td>
              <td className="size">{f.size > 0 ? Math.floor((f.progress / f.size) * 100) : f.state === 'complete' ? 100 : 0}%</td>
              <td>{f.state}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {problem && <p role="alert" className="problem">The files could not be read: {problem}</p>}
      {pages > 1 && (
        <nav className="pager" aria-label="Pages of files">
          <button type="button" onClick={() => setPage(page - 1)} disabled={page === 0}>Previous {PAGE}</button>
          <span className="muted">Page {(page + 1).toLocaleString()} of {pages.toLocaleString()}</span>
          <button type="button" onClick={() => setPage(page + 1)} disabled={page + 1 >= pages}>Next {PAGE}</button>
        </nav>
      )}
    </>
  );
}

export function TransferDetails({ t, meter }: { t: Transfer; meter: Meter }) {
  return (
    <div className="details">
      <SpeedGraph meter={meter} />
      <FilesTable t={t} />
      {t.direction === 'upload' && t.type === 'team' && t.state === 'complete' && <TransferLinks uploadId={t.upload_id} name={transferName(t)} />}
    </div>
  );
}
