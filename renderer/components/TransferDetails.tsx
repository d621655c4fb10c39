// A transfer's details: the speed of the last minutes (a few lines of SVG) and
// every file with its progress; for a complete Team upload, its Links.
import type { Transfer } from '../store/index.js';
import { TransferLinks } from './TransferLinks.js';
import { bytes, speed, type Meter } from '../format.js';

const SHOWN = 200;

function SpeedGraph({ meter }: { meter: Meter }) {
  const h = meter.history;
  if (h.length < 2) return <p className="muted">The speed graph starts once the transfer has run a few seconds.</p>;
  const w = 600, ht = 80;
  const t0 = h[0]!.t, t1 = h.at(-1)!.t, top = Math.max(...h.map((p) => p.rate), 1);
  const points = h.map((p) => `${(((p.t - t0) / Math.max(1, t1 - t0)) * w).toFixed(1)},${(ht - (p.rate / top) * (ht - 4)).toFixed(1)}`).join(' ');
  return (
    <figure className="graph">
      <svg viewBox={`0 0 ${w} ${ht}`} role="img" aria-label={`Speed over the last ${Math.max(1, Math.round((t1 - t0) / 60_000))} min, up to ${speed(top)}`} preserveAspectRatio="none">
        <polyline points={points} fill="none" stroke="currentColor" strokeWidth="2" vectorEffect="non-scaling-stroke" />
      </svg>
      <figcaption className="muted">Up to {speed(top)}</figcaption>
    </figure>
  );
}

export function TransferDetails({ t, meter }: { t: Transfer; meter: Meter }) {
  const files = t.direction === 'upload'
    ? t.items.map((i) => ({ key: i.path, name: i.name, size: i.size, progress: i.progress, state: i.state }))
    : t.items.map((i) => ({ key: i.file_id, name: i.path, size: i.size, progress: i.progress, state: i.state }));
  return (
    <div className="details">
      <SpeedGraph meter={meter} />
      <table className="files">
        <caption className="muted">{files.length} file{files.length === 1 ? '' : 's'}</caption>
        <thead><tr><th scope="col">File</th><th scope="col">Size</th><th scope="col">Done</th><th scope="col">State</th></tr></thead>
        <tbody>
          {files.slice(0, SHOWN).map((f) => (
            <tr key={f.key}>
              <td className="name" title={f.name}>{f.name}</td>
              <td className="size">{bytes(f.size)}</td>
              <td className="size">{f.size > 0 ? Math.floor((f.progress / f.size) * 100) : f.state === 'complete' ? 100 : 0}%</td>
              <td>{f.state}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {files.length > SHOWN && <p className="muted">and {files.length - SHOWN} more</p>}
      {t.direction === 'upload' && t.type === 'team' && t.state === 'complete' && <TransferLinks uploadId={t.upload_id} name={t.name} />}
    </div>
  );
}
