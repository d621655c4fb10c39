// Every transfer, as a transfer manager shows them: a status line (speeds,
// overall progress, counts), find and order, actions on all or on the rows
// selected, and a dense grid of rows. The header stays in view while the rows
// scroll. The grid is windowed: only the rows in view (and a few around) are in
// the page, so thousands of transfers scroll as smoothly as ten; it says how many
// rows there are (aria-rowcount) and where each is (aria-rowindex).
import { useCallback, useEffect, useMemo, useReducer, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useApp } from '../store/context.js';
import type { Transfer } from '../store/index.js';
import { Meter } from '../format.js';
import { StatusLine } from '../components/StatusLine.js';
import { useLimits } from '../components/useLimits.js';
import { BulkActions, ListTools, SelectedActions, type Bulk, type Filter } from '../components/ListTools.js';
import { TransferRow } from '../components/TransferRow.js';
import { keyOfTransfer } from '../../src/ipc/transfers.js';
import { useRowSelection } from '../components/useRowSelection.js';
import { compare, found, isCanceled, isFinished, isResumable, totals, type Order } from '../components/transferFacts.js';

/** Active: running, queued, paused or finishing; Failed: in error, not canceled (a canceled one shows under All). */
const matches = (t: Transfer, f: Filter) =>
  f === 'all' || (f === 'active' ? t.state === 'transferring' || t.state === 'paused' || t.state === 'idle' : f === 'complete' ? t.state === 'complete' : t.state === 'error' && !isCanceled(t));

/** Rows are two lines; the estimate only places rows not yet measured. */
const ROW_ESTIMATE = 46;

/** A click on these acts on them, not on the row's selection. */
const OWN_CLICK = 'button, a, input, select, textarea, label, summary, .cell-more';

export function Transfers() {
  const transfers = useApp((s) => s.transfers);
  const call = useApp((s) => s.call);
  const go = useApp((s) => s.go);
  const browser = useApp((s) => !s.transport.desktop);
  const limits = useLimits();
  const [filter, setFilter] = useState<Filter>('all');
  const [query, setQuery] = useState('');
  const [order, setOrder] = useState<Order>('newest');
  const [problem, setProblem] = useState<string>();
  const meters = useRef(new Map<string, Meter>());
  const all = Object.values(transfers);

  // Every transfer's meter gets its sample here, shown or not (the status line sums them all),
  // and once a second while one runs, so that a transfer that stalls reads as slowing to nothing.
  const [, tick] = useReducer((n: number) => n + 1, 0);
  const running = all.some((t) => t.state === 'transferring');
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(tick, 1000);
    return () => clearInterval(timer);
  }, [running]);
  const meterOf = (t: Transfer) => {
    const k = keyOfTransfer(t);
    let m = meters.current.get(k);
    if (!m) meters.current.set(k, (m = new Meter()));
    return m;
  };
  const now = Date.now();
  for (const t of all) meterOf(t).add(now, t.progress);
  const sum = totals(all, (t) => (t.state === 'transferring' ? meterOf(t).rate() : undefined));

  // Built again only when the records, the filter, the search or the order change, not at each tick.
  const list = useMemo(() => Object.values(transfers).filter((t) => matches(t, filter) && found(t, query)).sort(compare(order)), [transfers, filter, query, order]);
  const keysJoined = list.map(keyOfTransfer).join('\n');
  const keys = useMemo(() => (keysJoined ? keysJoined.split('\n') : []), [keysJoined]);
  const itemKey = useCallback((i: number) => keys[i]!, [keys]);
  const selection = useRowSelection(keys);
  const [current, setCurrent] = useState<string>();

  const listRef = useRef<HTMLUListElement>(null);
  const headRef = useRef<HTMLElement>(null);
  // The place's own scroll box scrolls the grid, below the header that stays in view.
  const rows = useVirtualizer({
    count: list.length,
    getScrollElement: () => listRef.current?.closest<HTMLElement>('.place-view') ?? null,
    estimateSize: () => ROW_ESTIMATE,
    overscan: 8,
    scrollMargin: listRef.current?.offsetTop ?? 0,
    scrollPaddingStart: headRef.current?.offsetHeight ?? 0,
    getItemKey: itemKey,
  });
  // A transfer's details opened by its address: its row is drawn and in view, once the list has it.
  const detailsOf = useApp((s) => s.detailsOf);
  const scrolledTo = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!detailsOf || scrolledTo.current === detailsOf) return;
    const i = keys.indexOf(detailsOf);
    if (i < 0) return;
    scrolledTo.current = detailsOf;
    rows.scrollToIndex(i, { align: 'start' });
  }, [detailsOf, keys, rows]);
  const shownItems = rows.getVirtualItems();
  // Tab reaches one row: the one last focused, or the first drawn.
  const tabbable = current !== undefined && shownItems.some((i) => i.key === current) ? current : (shownItems[0]?.key as string | undefined);

  /** Moves focus to row `i`, drawing it first when it is out of view. */
  const focusRow = (i: number) => {
    const key = keys[i];
    if (key === undefined) return;
    setCurrent(key);
    rows.scrollToIndex(i, { align: 'auto' });
    let frames = 0;
    const attempt = () => {
      const el = listRef.current?.querySelector<HTMLElement>(`[data-transfer="${CSS.escape(key)}"]`);
      if (el) return el.focus({ preventScroll: true });
      if (++frames < 30) requestAnimationFrame(attempt);
    };
    attempt();
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const row = e.target as HTMLElement;
    if (row.getAttribute('role') !== 'row') return; // keys inside a row's buttons and details are theirs
    const key = row.dataset.transfer!;
    const i = keys.indexOf(key);
    const mod = e.ctrlKey || e.metaKey;
    const to = e.key === 'ArrowDown' ? i + 1 : e.key === 'ArrowUp' ? i - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? keys.length - 1 : undefined;
    if (to !== undefined) {
      e.preventDefault();
      const j = Math.max(0, Math.min(keys.length - 1, to));
      if (e.shiftKey) selection.extendTo(keys[j]!, key);
      focusRow(j);
    } else if (e.key === ' ') {
      e.preventDefault();
      selection.toggle(key);
    } else if (mod && e.key.toLowerCase() === 'a') {
      e.preventDefault();
      selection.all();
    } else if (e.key === 'Escape' && selection.shown.length > 0) {
      e.preventDefault();
      selection.clear();
    }
  };
  const onPick = (t: Transfer) => (e: MouseEvent<HTMLElement>) => {
    if ((e.target as HTMLElement).closest(OWN_CLICK)) return;
    const key = keyOfTransfer(t);
    selection.pick(key, { toggle: e.ctrlKey || e.metaKey, range: e.shiftKey });
    setCurrent(key);
    if (e.shiftKey) window.getSelection()?.removeAllRanges(); // a Shift+click selects rows, not their text
  };

  /** Runs the calls, and says the first problem, if any. */
  const run = async (calls: Promise<{ ok: boolean; error?: { message: string } }>[]) => {
    const answers = await Promise.all(calls);
    setProblem(answers.find((a) => !a.ok)?.error?.message);
  };
  const pause = (ts: Transfer[]) => run(ts.filter((t) => t.state === 'transferring').map((t) =>
    t.direction === 'upload' ? call('uploads.pause', { upload_id: t.upload_id }) : call('downloads.pause', { download_id: t.download_id })));
  const resume = (ts: Transfer[]) => run(ts.filter(isResumable).map((t) =>
    t.direction === 'upload' ? call('uploads.resume', { upload_id: t.upload_id }) : call('downloads.resume', { download_id: t.download_id })));
  // Only finished ones (complete or canceled): a running transfer ends through its own Cancel.
  const removeFinished = (ts: Transfer[]) => run(ts.filter(isFinished).map((t) =>
    t.direction === 'upload' ? call('uploads.remove', { upload_id: t.upload_id }) : call('downloads.remove', { download_id: t.download_id })));
  const countOf = (ts: Transfer[]) => ({
    pausable: ts.filter((t) => t.state === 'transferring').length,
    resumable: ts.filter(isResumable).length,
    finished: ts.filter(isFinished).length,
  });
  const bulk: Bulk = {
    ...countOf(all),
    pauseAll: () => void run([call('uploads.pauseAll', {}), call('downloads.pauseAll', {})]),
    resumeAll: () => void run([call('uploads.resumeAll', {}), call('downloads.resumeAll', {})]),
    clearFinished: () => void removeFinished(all),
  };
  const picked = selection.shown.map((k) => transfers[k]!).filter(Boolean);
  const actions = picked.length > 0
    ? <SelectedActions sel={{ ...countOf(picked), count: picked.length, pauseAll: () => void pause(picked), resumeAll: () => void resume(picked), clearFinished: () => void removeFinished(picked), clear: selection.clear }} />
    : <BulkActions bulk={bulk} />;

  return (
    <section aria-labelledby="place-title" className="transfers">
      <header className="place-head transfers-head" ref={headRef}>
        <div className="head-line">
          <h1 id="place-title">Transfers</h1>
          <StatusLine totals={sum} browser={browser} limits={limits} />
        </div>
        <ListTools find={{ query, order, filter, setQuery, setOrder, setFilter }} actions={actions} />
        {problem && <p className="note error-text" role="status">{problem}</p>}
      </header>
      {list.length === 0 ? (
        <div className="empty">
          <p>{all.length === 0 ? 'No transfers yet.' : query.trim() ? `No transfer matches “${query.trim()}”.` : 'None here.'}</p>
          {all.length === 0 && (
            <p className="muted">
              Start one from <button type="button" className="link" onClick={() => go('send')}>Send</button> or{' '}
              <button type="button" className="link" onClick={() => go('receive')}>Receive</button>.
            </p>
          )}
        </div>
      ) : (
        <div role="grid" aria-label="Transfers" aria-multiselectable="true" aria-rowcount={list.length} className="grid" onKeyDown={onKeyDown}>
          <ul className="rows" role="none" ref={listRef} style={{ height: rows.getTotalSize() }}>
            {shownItems.map((item) => {
              const t = list[item.index]!;
              const style = { transform: `translateY(${item.start - rows.options.scrollMargin}px)` };
              return (
                <TransferRow key={item.key} t={t} meter={meterOf(t)} slot={{ ref: rows.measureElement, index: item.index, style }}
                  selected={selection.has(item.key as string)} tabbable={tabbable === item.key} onPick={onPick(t)} onFocusRow={() => setCurrent(item.key as string)} />
              );
            })}
          </ul>
        </div>
      )}
    </section>
  );
}
