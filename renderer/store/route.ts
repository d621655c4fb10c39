// Addresses of the window's screens: hash routes (`#/send`, `#/transfers/upload:<id>`),
// which work alike in a browser and on the desktop app's app:// page (a hash never
// reaches the server or the protocol handler). A Link never goes into an address: its
// secret would stay in the history.

export type Place = 'send' | 'receive' | 'transfers' | 'automations' | 'gateway' | 'settings';

export const PLACES: readonly Place[] = ['send', 'receive', 'transfers', 'automations', 'gateway', 'settings'];

export interface Route {
  place: Place;
  /** The transfer whose details are open (`upload:<id>` / `download:<id>`), on Transfers only. */
  detailsOf: string | undefined;
}

const TRANSFER_KEY = /^(upload|download):[A-Za-z0-9_-]{1,64}$/;

/** The route a hash names; anything unknown is Transfers. */
export function parseRoute(hash: string): Route {
  const [place, ...rest] = hash.replace(/^#\/?/, '').split('/');
  const key = rest.length === 1 ? decodeURIComponent(rest[0]!) : undefined;
  if (place === 'transfers' && key !== undefined && TRANSFER_KEY.test(key)) return { place: 'transfers', detailsOf: key };
  if (rest.length === 0 && (PLACES as readonly string[]).includes(place ?? '')) return { place: place as Place, detailsOf: undefined };
  return { place: 'transfers', detailsOf: undefined };
}

export function hashOf(r: Route): string {
  return r.place === 'transfers' && r.detailsOf ? `#/transfers/${r.detailsOf}` : `#/${r.place}`;
}
