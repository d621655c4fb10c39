// The store reaches components through context, so that tests and the two hosts can hand in their own.
import { createContext, useContext } from 'react';
import { useStore as useZustand } from 'zustand';
import type { State, Store } from './index.js';

export const StoreContext = createContext<Store | null>(null);

export function useApp<T>(pick: (s: State) => T): T {
  const store = useContext(StoreContext);
  if (!store) throw new Error('no store');
  return useZustand(store, pick);
}
