// A transfer's details: the speed of the last minutes (SVG, with axes) and
// every file with its progress; for a complete Team upload, its Links.
import type { Transfer } from '../store/index.js';
import { TransferLinks } from './TransferLinks.js';
import { bytes, speed, type Meter } from '../format.js';

const SHOWN = 200;

/** Up to about four round speed ticks (in the unit the top speed reads in) from 0 to at least `top`. */
export function speedTicks(top: number): number[] {
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
export function timeTicks(spanMs: number): { ago: number; label: string }[] {
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
      {t.direction === 'upload' && t.type === 'team' && t.state === 'complete' && <TransferLinks uploadId={t.upload_id} name={t.package_name} />}
    </div>
  );
}
