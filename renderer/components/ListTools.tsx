// The tools above the Transfers grid: find (a search), order, which to show,
// and the actions on many at once — on every transfer (Pause all, Resume all,
// Clear completed), or on the rows selected.
import type { ReactNode } from 'react';
import { ORDERS, type Order } from './transferFacts.js';

export type Filter = 'all' | 'active' | 'complete' | 'failed';
export const FILTERS: { id: Filter; label: string }[] = [
  { id: 'all', label: 'All' },
  { id: 'active', label: 'Active' },
  { id: 'complete', label: 'Complete' },
  { id: 'failed', label: 'Failed' },
];

export interface FindAndOrder {
  query: string;
  order: Order;
  filter: Filter;
  setQuery(q: string): void;
  setOrder(o: Order): void;
  setFilter(f: Filter): void;
}

export function ListTools({ find, actions }: { find: FindAndOrder; actions: ReactNode }) {
  return (
    <div className="list-tools">
      <input type="search" className="find" aria-label="Find transfers by Package name, folder or recipient" placeholder="Find by Package, folder or recipient" value={find.query} onChange={(e) => find.setQuery(e.target.value)} />
      <select className="order" aria-label="Order" value={find.order} onChange={(e) => find.setOrder(e.target.value as Order)}>
        {ORDERS.map((o) => <option key={o.id} value={o.id}>{o.label}</option>)}
      </select>
      <div role="group" aria-label="Show" className="filters">
        {FILTERS.map((f) => (
          <button key={f.id} type="button" aria-pressed={find.filter === f.id} onClick={() => find.setFilter(f.id)}>{f.label}</button>
        ))}
      </div>
      {actions}
    </div>
  );
}

/**
 * A button with nothing to do says so (aria-disabled) but keeps focus: a disabled
 * one would drop it to the page when its own click leaves nothing more to do.
 */
function Act({ count, onClick, children }: { count: number; onClick(): void; children: ReactNode }) {
  return <button type="button" aria-disabled={count === 0} onClick={() => count > 0 && onClick()}>{children}</button>;
}

export interface Bulk {
  /** How many of each the actions would act on: a button with nothing to do says so. */
  pausable: number;
  resumable: number;
  /** Complete or canceled. */
  finished: number;
  pauseAll(): void;
  resumeAll(): void;
  clearFinished(): void;
}

export function BulkActions({ bulk }: { bulk: Bulk }) {
  return (
    <div role="group" aria-label="All transfers" className="bulk">
      <Act count={bulk.pausable} onClick={bulk.pauseAll}>Pause all</Act>
      <Act count={bulk.resumable} onClick={bulk.resumeAll}>Resume all</Act>
      <Act count={bulk.finished} onClick={bulk.clearFinished}>Clear completed</Act>
    </div>
  );
}

export interface SelectionActions extends Bulk {
  count: number;
  clear(): void;
}

/**
 * The selected rows' actions. Remove takes only the finished ones (complete or
 * canceled): ending a running transfer goes through its own Cancel (and whatever
 * it asks first).
 */
export function SelectedActions({ sel }: { sel: SelectionActions }) {
  return (
    <div role="group" aria-label="Selected transfers" className="bulk selected-actions">
      <span className="selected-count">{sel.count} selected</span>
      <Act count={sel.pausable} onClick={sel.pauseAll}>Pause</Act>
      <Act count={sel.resumable} onClick={sel.resumeAll}>Resume</Act>
      <Act count={sel.finished} onClick={sel.clearFinished}>{sel.finished > 0 ? `Remove ${sel.finished} finished` : 'Remove finished'}</Act>
      <button type="button" onClick={sel.clear}>Clear selection</button>
    </div>
  );
}
