// Every transfer, newest first: name, direction, a progress bar with its values,
// speed and time left (or why it waits or failed), and its actions. The list is
// windowed: only the rows in view (and a few around) are in the page, so
// thousands of transfers scroll as smoothly as ten.
import { useRef, useState, type CSSProperties, type Ref } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useApp } from '../store/context.js';
import { transferId, type Transfer } from '../store/index.js';
import { Meter } from '../format.js';
import { nameOf, status } from '../components/transferStatus.js';
import { CancelTransfer } from '../components/CancelTransfer.js';
import { TransferDetails } from '../components/TransferDetails.js';

type Filter = 'all' | 'active' | 'complete' | 'failed';
const FILTERS: { id: Filter; label: string }[] = [
  { id: 'all', label: 'All' },
  { id: 'active', label: 'Active' },
  { id: 'complete', label: 'Complete' },
  { id: 'failed', label: 'Failed' },
];

const matches = (t: Transfer, f: Filter) =>
  f === 'all' || (f === 'active' ? t.state === 'transferring' || t.state === 'paused' || t.state === 'idle' : f === 'complete' ? t.state === 'complete' : t.state === 'error');

interface Slot { ref: Ref<HTMLLIElement>; index: number; of: number; style: CSSProperties }

function Row({ t, meter, slot }: { t: Transfer; meter: Meter; slot: Slot }) {
  const call = useApp((s) => s.call);
  const transport = useApp((s) => s.transport);
  const [note, setNote] = useState<string>();
  const [open, setOpen] = useState(false);
  meter.add(Date.now(), t.progress);
  const pct = t.size > 0 ? Math.floor((t.progress / t.size) * 100) : t.state === 'complete' ? 100 : 0;
  const name = nameOf(t);
  const act = async (what: 'pause' | 'resume') => {
    const r = t.direction === 'upload' ? await call(`uploads.${what}` as const, { upload_id: t.upload_id }) : await call(`downloads.${what}` as const, { download_id: t.download_id });
    setNote(r.ok ? undefined : r.error.message);
  };
  const copyLink = async () => {
    if (t.direction !== 'upload') return;
    // The transfer's own Link, the same at every click: its download limit counts for everyone it goes to.
    const r = await call('uploads.transferLink', { upload_id: t.upload_id });
    if (!r.ok) return setNote(r.error.message);
    await navigator.clipboard?.writeText(r.value.url).catch(() => undefined);
    setNote(`Link copied: ${r.value.url}`);
  };
  return (
    <li className="slot" ref={slot.ref} data-index={slot.index} data-transfer={`${t.direction}:${transferId(t)}`} tabIndex={-1} style={slot.style} aria-setsize={slot.of} aria-posinset={slot.index + 1}
      aria-label={`${t.direction === 'upload' ? 'Upload' : 'Download'} ${name}`}>
      <div className={`row state-${t.state}`}>
      <div className="row-head">
        <span className="direction" aria-hidden="true">{t.direction === 'upload' ? '↑' : '↓'}</span>
        <span className="name" title={name}>{name}</span>
        <span className="actions">
          <button type="button" aria-expanded={open} aria-label={`Details of ${name}`} onClick={() => setOpen(!open)}>Details</button>
          {t.state === 'transferring' && <button type="button" onClick={() => act('pause')}>Pause</button>}
          {(t.state === 'paused' || (t.state === 'error' && !t.canceled_at)) && <button type="button" onClick={() => act('resume')}>Resume</button>}
          {t.direction === 'upload' && t.state === 'complete' && t.type === 'team' && <button type="button" onClick={copyLink}>Copy link</button>}
          {transport.desktop && t.direction === 'download' && t.items.some((i) => i.local_path) && (
            <button type="button" onClick={() => void transport.desktop!('app.showInFolder', { path: t.items.find((i) => i.local_path)!.local_path })}>Show in folder</button>
          )}
          <CancelTransfer t={t} name={name} onProblem={setNote} />
        </span>
      </div>
      <div className="status">{status(t, meter.rate())}</div>
      <div className="bar" role="progressbar" aria-label={`Progress of ${name}`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}>
        <div className="fill" style={{ width: `${pct}%` }} />
      </div>
      {note && <div className="note" role="status">{note}</div>}
      {open && <TransferDetails t={t} meter={meter} />}
      </div>
    </li>
  );
}

export function Transfers() {
  const transfers = useApp((s) => s.transfers);
  const go = useApp((s) => s.go);
  const [filter, setFilter] = useState<Filter>('all');
  const meters = useRef(new Map<string, Meter>());
  const list = Object.values(transfers)
    .filter((t) => matches(t, filter))
    .sort((a, b) => b.created_at.localeCompare(a.created_at));
  const listRef = useRef<HTMLUListElement>(null);
  const keyOf = (t: Transfer) => `${t.direction}:${transferId(t)}`;
  // The place's own scroll box scrolls the list, below the header.
  const rows = useVirtualizer({
    count: list.length,
    getScrollElement: () => listRef.current?.closest<HTMLElement>('.place-view') ?? null,
    estimateSize: () => 84,
    overscan: 6,
    scrollMargin: listRef.current?.offsetTop ?? 0,
    getItemKey: (i) => keyOf(list[i]!),
  });
  const meterOf = (t: Transfer) => {
    const k = keyOf(t);
    let m = meters.current.get(k);
    if (!m) meters.current.set(k, (m = new Meter()));
    return m;
  };
  return (
    <section aria-labelledby="place-title">
      <header className="place-head">
        <h1 id="place-title">Transfers</h1>
        <div role="group" aria-label="Show" className="filters">
          {FILTERS.map((f) => (
            <button key={f.id} type="button" aria-pressed={filter === f.id} onClick={() => setFilter(f.id)}>
              {f.label}
            </button>
          ))}
        </div>
      </header>
      {list.length === 0 ? (
        <div className="empty">
          <p>{filter === 'all' ? 'No transfers yet.' : 'None here.'}</p>
          <p className="muted">
            Start one from <button type="button" className="link" onClick={() => go('send')}>Send</button> or{' '}
            <button type="button" className="link" onClick={() => go('receive')}>Receive</button>.
          </p>
        </div>
      ) : (
        <ul className="rows" aria-label="Transfers" ref={listRef} style={{ height: rows.getTotalSize() }}>
          {rows.getVirtualItems().map((item) => {
            const t = list[item.index]!;
            const style = { transform: `translateY(${item.start - rows.options.scrollMargin}px)` };
            return <Row key={item.key} t={t} meter={meterOf(t)} slot={{ ref: rows.measureElement, index: item.index, of: list.length, style }} />;
          })}
        </ul>
      )}
    </section>
  );
}
