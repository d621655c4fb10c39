// One transfer in the Transfers grid, in two lines: its direction and state as
// icons, the Package name with what it was made of and when it ran, the status
// line and progress bar, and its actions as small icon buttons (named for
// assistive technology, with a tooltip). The row itself is focusable and
// selectable; Transfers moves focus and selection between rows.
import { useState, type CSSProperties, type MouseEvent, type Ref } from 'react';
import { useApp } from '../store/context.js';
import type { Transfer } from '../store/index.js';
import { keyOfTransfer, transferName } from '../../src/ipc/transfers.js';
import type { Meter } from '../format.js';
import { status } from './transferStatus.js';
import { CancelTransfer } from './CancelTransfer.js';
import { TransferDetails } from './TransferDetails.js';
import { Icon, type IconName } from './icons.js';
import { STATE_WORDS, detailOf, isResumable, queuePosition, shownState, timesOf, type Shown } from './transferFacts.js';

export interface Slot { ref: Ref<HTMLLIElement>; index: number; style: CSSProperties }

const STATE_ICONS: Record<Shown, IconName> = { transferring: 'spin', queued: 'clock', paused: 'pause', complete: 'check', error: 'alert', canceled: 'cross', idle: 'spin' };

interface RowProps {
  t: Transfer;
  meter: Meter;
  slot: Slot;
  selected: boolean;
  /** The row Tab reaches in the grid (one at a time). */
  tabbable: boolean;
  onPick(e: MouseEvent<HTMLElement>): void;
  onFocusRow(): void;
}

export function TransferRow({ t, meter, slot, selected, tabbable, onPick, onFocusRow }: RowProps) {
  const call = useApp((s) => s.call);
  const transport = useApp((s) => s.transport);
  const [note, setNote] = useState<string>();
  // One transfer's details at a time, in the address (#/transfers/upload:<id>).
  const open = useApp((s) => s.detailsOf === keyOfTransfer(t));
  const stopped = useApp((s) => s.stops[keyOfTransfer(t)] === true);
  const showDetails = useApp((s) => s.showDetails);
  const pct = t.size > 0 ? Math.floor((t.progress / t.size) * 100) : t.state === 'complete' ? 100 : 0;
  const name = transferName(t);
  const shown = shownState(t);
  const place = queuePosition(t);
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
  const shownIn = transport.desktop && t.direction === 'download' ? t.dst_folder : undefined;
  const line = status(t, meter.rate());
  const detail = detailOf(t);
  const times = timesOf(t, stopped);
  return (
    <li className="slot" role="none" ref={slot.ref} data-index={slot.index} style={slot.style}>
      <div role="row" className={`row state-${t.state} shown-${shown}`} data-transfer={keyOfTransfer(t)} tabIndex={tabbable ? 0 : -1} aria-rowindex={slot.index + 1} aria-selected={selected}
        aria-label={`${t.direction === 'upload' ? 'Upload' : 'Download'} ${name}`} onClick={onPick} onFocus={(e) => e.target === e.currentTarget && onFocusRow()}>
        <div role="gridcell" className="cell-icons">
          <Icon name={t.direction === 'upload' ? 'up' : 'down'} label={t.direction === 'upload' ? 'Upload' : 'Download'} className="direction" />
          <Icon name={STATE_ICONS[shown]} label={place !== undefined ? `Queued, number ${place}` : STATE_WORDS[shown]} className="state" />
        </div>
        <div role="gridcell" className="cell-name">
          <span className="name" title={name}>{name}</span>
          <span className="detail muted" title={`${detail} · ${times}`}><span>{detail}</span> · <span className="times">{times}</span></span>
        </div>
        <div role="gridcell" className="cell-status">
          <span className="status" title={line}>{line}</span>
          <div className="bar" role="progressbar" aria-label={`Progress of ${name}`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}>
            <div className="fill" style={{ width: `${pct}%` }} />
          </div>
        </div>
        <div role="gridcell" className="actions">
          {t.state === 'transferring' && <button type="button" className="icon-button" aria-label="Pause" title="Pause" onClick={() => act('pause')}><Icon name="pause" /></button>}
          {isResumable(t) && <button type="button" className="icon-button" aria-label="Resume" title="Resume" onClick={() => act('resume')}><Icon name="play" /></button>}
          {t.direction === 'upload' && t.state === 'complete' && t.type === 'team' && <button type="button" className="icon-button" aria-label="Copy link" title="Copy link" onClick={copyLink}><Icon name="link" /></button>}
          {shownIn && <button type="button" className="icon-button" aria-label="Show in folder" title="Show in folder" onClick={() => void transport.desktop!('app.showInFolder', { path: shownIn })}><Icon name="folder" /></button>}
          <CancelTransfer t={t} name={name} onProblem={setNote} />
          <button type="button" className="icon-button toggle" aria-expanded={open} aria-label={`Details of ${name}`} title="Details" onClick={() => showDetails(open ? undefined : keyOfTransfer(t))}><Icon name="chevron" /></button>
        </div>
        {(note || open) && (
          <div role="gridcell" className="cell-more">
            {note && <div className="note" role="status">{note}</div>}
            {open && <TransferDetails t={t} meter={meter} />}
          </div>
        )}
      </div>
    </li>
  );
}
