// Which rows of a list are selected, as file managers do it: a click selects one
// row, Ctrl/Cmd+click adds or takes one away, Shift+click (or Shift+arrow) takes
// the range from the row last picked (the anchor). Keys are the rows' keys in
// the order shown; selected rows that a search hides stay selected but are not
// counted until they show again.
import { useCallback, useMemo, useState } from 'react';

export interface RowSelection {
  /** The selected keys among those shown, in the order shown. */
  shown: string[];
  has(key: string): boolean;
  /** A click: `toggle` for Ctrl/Cmd, `range` for Shift. */
  pick(key: string, how: { toggle: boolean; range: boolean }): void;
  toggle(key: string): void;
  /** From the anchor (else `origin`, the row focus leaves) to `key`, replacing the selection (Shift+arrow). */
  extendTo(key: string, origin: string): void;
  all(): void;
  clear(): void;
}

export function useRowSelection(keys: string[]): RowSelection {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [anchor, setAnchor] = useState<string>();
  const range = useCallback((from: string | undefined, to: string) => {
    const a = from === undefined ? -1 : keys.indexOf(from);
    const b = keys.indexOf(to);
    if (a < 0 || b < 0) return new Set([to]);
    return new Set(keys.slice(Math.min(a, b), Math.max(a, b) + 1));
  }, [keys]);
  const shown = useMemo(() => keys.filter((k) => selected.has(k)), [keys, selected]);
  return {
    shown,
    has: (key) => selected.has(key),
    pick(key, how) {
      if (how.range) return setSelected(range(anchor, key));
      setAnchor(key);
      if (how.toggle) return setSelected(toggled(selected, key));
      setSelected(new Set([key]));
    },
    toggle(key) {
      setAnchor(key);
      setSelected(toggled(selected, key));
    },
    extendTo(key, origin) {
      const from = anchor ?? origin;
      if (anchor === undefined) setAnchor(origin);
      setSelected(range(from, key));
    },
    all: () => setSelected(new Set(keys)),
    clear: () => setSelected(new Set()),
  };
}

function toggled(s: ReadonlySet<string>, key: string): Set<string> {
  const next = new Set(s);
  if (!next.delete(key)) next.add(key);
  return next;
}
