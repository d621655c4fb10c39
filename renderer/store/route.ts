// Addresses of the window's screens: hash routes (`#/send`, `#/transfers/upload:<id>`),
// which work alike in a browser and on the desktop app's app:// page (a hash never
// reaches the server or the protocol handler). A Link never goes into an address: its
// secret would stay in the history.

import { isTransferKey } from '../../src/ipc/transfers.js';

export type Place = 'send' | 'receive' | 'transfers' | 'automations' | 'gateway' | 'settings';

export const PLACES: readonly Place[] = ['send', 'receive', 'transfers', 'automations', 'gateway', 'settings'];

export interface Route {
  place: Place;
  /** The transfer whose details are open (`upload:<id>` / `download:<id>`), on Transfers only. */
  detailsOf: string | undefined;
}

/** The route a hash names; anything unknown is Transfers. */
export function parseRoute(hash: string): Route {
  const [place, ...rest] = hash.replace(/^#\/?/, '').split('/');
  const key = rest.length === 1 ? decodeURIComponent(rest[0]!) : undefined;
  if (place === 'transfers' && key !== undefined && isTransferKey(key)) return { place: 'transfers', detailsOf: key };
  if (rest.length === 0 && (PLACES as readonly string[]).includes(place ?? '')) return { place: place as Place, detailsOf: undefined };
  return { place: 'transfers', detailsOf: undefined };
}

export function hashOf(r: Route): string {
  return r.place === 'transfers' && r.detailsOf ? `#/transfers/${r.detailsOf}` : `#/${r.place}`;
}

/**
 * Back (-1) or Forward (1) for an input the desktop window gets: Alt+Left/Right
 * (Cmd+[ and Cmd+] on macOS) and a mouse's back and forward buttons. A browser
 * does this itself; Electron's window does not.
 */
export function historyStep(e: { key?: string; altKey?: boolean; metaKey?: boolean; ctrlKey?: boolean; shiftKey?: boolean; button?: number }): -1 | 1 | undefined {
  if (e.button === 3) return -1;
  if (e.button === 4) return 1;
  if (e.ctrlKey || e.shiftKey) return undefined;
  if (e.altKey && !e.metaKey) return e.key === 'ArrowLeft' ? -1 : e.key === 'ArrowRight' ? 1 : undefined;
  if (e.metaKey && !e.altKey) return e.key === '[' ? -1 : e.key === ']' ? 1 : undefined;
  return undefined;
}
