// The renderer's state (zustand), in slices: the session, the transfers (a
// snapshot and the events after its cursor), and the app (where the user is, the
// connection to the agent). Actions go through the one Transport.
import { create } from 'zustand';
import type { SessionAnswer } from '../../src/api/agent/session.js';
import type { UploadSummary } from '../../src/api/agent/uploads.js';
import { applyChange, keyOfChange, transferKey, withDirection, type TransferSummary } from '../../src/ipc/transfers.js';
import type { AgentSettings, SettingsChange } from '../../src/api/agent/settings.js';
import type { AutomationRecord } from '../../src/api/agent/automations.js';
import type { GatewayRecord } from '../../src/api/agent/storageGateway.js';
import type { Answer, Channel, RequestOf, ResponseOf, TransferEvent, TransfersSnapshot } from '../../src/ipc/contract.js';
import type { Connection, Transport } from '../transport/types.js';
import { hashOf, parseRoute, type Place, type Route } from './route.js';
import { AgentErrorCode } from '../../src/api/agent/errors.js';
import { signInError, type FormError } from './signInError.js';
import { stopsAfterChanges, stopsAfterSnapshot, type Stops } from './stops.js';

export { signInError, type FormError } from './signInError.js';

export type { Place } from './route.js';

export type Transfer = TransferSummary;

export interface State {
  transport: Transport;
  connection: Connection;
  /** The agent wants its API key (browser mode) before anything else. */
  locked: boolean;
  /** Where the user is; the window's address says it (route.ts), so Back, Forward and a reload keep to it. */
  place: Place;
  /** The transfer whose details are open on Transfers (`upload:<id>`), in the address too. */
  detailsOf: string | undefined;
  /** A Link to receive, handed over (pasted, or given to the desktop app). */
  link: string | undefined;
  /** The desktop app's update, as main tells it. */
  update: { status: 'idle' | 'available' | 'downloading' | 'ready'; percent?: number } | undefined;
  session: SessionAnswer | null | undefined;
  /** The agent's settings (Settings, and the server on the sign-in screen). */
  settings: AgentSettings | undefined;
  /** The agent's automations by id; undefined until loaded (they need a session). */
  automations: Record<string, AutomationRecord> | undefined;
  /** The storage gateways registered on the agent, by id; undefined until loaded. */
  gateways: Record<string, GatewayRecord> | undefined;
  /** By `upload:<id>` / `download:<id>`. */
  transfers: Record<string, Transfer>;
  /** The transfers seen stop before complete (stops.ts): their rows show no average speed. */
  stops: Stops;
  cursor: number;

  /** Goes to a place: a new entry in the window's history. */
  go(place: Place): void;
  /** Opens a transfer's details on Transfers (undefined closes them): a new entry in the history. */
  showDetails(key: string | undefined): void;
  /** Follows the address after Back, Forward or an address typed (no new entry). */
  followAddress(): void;
  /** The transfer Transfers puts focus on when it opens (`upload:<id>`), once. */
  focusTransfer: string | undefined;
  /** A transfer just started: into the list at once (its events follow), and Transfers opens with focus on it. */
  showTransfer(direction: 'upload', record: UploadSummary): void;
  openLink(url: string): void;
  /** The Link typed or pasted on Receive, kept while the window lives (never in the address). */
  keepLink(url: string): void;
  /** Ctrl/Cmd+O: Send, with the file chooser open (a count, so each press opens it). */
  chooseFiles: number;
  addFiles(): void;
  call<C extends Channel>(channel: C, request: RequestOf<C>): Promise<Answer<ResponseOf<C>>>;
  loadSession(): Promise<void>;
  loadSettings(): Promise<void>;
  loadAutomations(): Promise<void>;
  applyAutomation(change: AutomationRecord | { automation_id: string; deleted: true }): void;
  loadGateways(): Promise<void>;
  /** A gateway's record as it now is; `disconnected` (the unregister answer) or `deleted` (its event) means unregistered. */
  applyGateway(g: GatewayRecord | { id: string; deleted: true }): void;
  /** Changes settings; after a change that starts the agent again, resolves once it is back. Answers a problem in words (and its field), if any. */
  saveSettings(change: SettingsChange): Promise<FormError | undefined>;
  /** Signs in, first moving the agent to `server` when it is another one. A problem names the form's field: server, email, password, api_key. */
  signIn(email: string, password: string, server?: string): Promise<FormError | undefined>;
  signInWithKey(key: string, server?: string): Promise<FormError | undefined>;
  /** "Try it on this computer". */
  tryThisComputer(): Promise<FormError | undefined>;
  signOut(): Promise<void>;
  applySnapshot(s: TransfersSnapshot): void;
  applyEvents(batch: TransferEvent[]): void;
}


/**
 * Whether the record shown is newer than one that arrives: an answer can come after
 * the event of a later change (a gateway's socket connects before register answers).
 */
const newer = (shown: { updated_at: string } | undefined, arriving: { updated_at: string }) => shown !== undefined && shown.updated_at > arriving.updated_at;

/** How long the window waits for an agent that starts again with new settings. */
const RESTART_WAIT_MS = 60_000;

export function createStore(transport: Transport) {
  return create<State>()((set, get) => {
  /** Every request goes through here: an agent that wants its API key locks the window until it has it. */
  const invoke: Transport['invoke'] = async (channel, request) => {
    const a = await transport.invoke(channel, request);
    if (!a.ok && a.error.code === AgentErrorCode.apiKey) set({ locked: true });
    return a;
  };
  /** Resolves once the agent, about to start again, has gone and is connected again (false when it does not come back in time). */
  const restarted = () =>
    new Promise<boolean>((resolve) => {
      let gone = false;
      const t = setTimeout(() => finish(false), RESTART_WAIT_MS);
      const stop = transport.onConnection((c) => {
        if (c !== 'connected') gone = true;
        else if (gone) finish(true);
      });
      function finish(ok: boolean) {
        clearTimeout(t);
        stop();
        resolve(ok);
      }
    });
  const agentBack = async (r: { restarting: boolean }, waiting: Promise<boolean>): Promise<FormError | undefined> => {
    if (r.restarting && !(await waiting)) return { message: 'The agent did not come back after starting again. Is it running?' };
    return undefined;
  };
  /** Moves the agent to another server before a sign-in, when it is one. */
  const useServer = async (server: string | undefined): Promise<FormError | undefined> => {
    const url = server?.trim().replace(/\/+$/, '');
    if (!url) return undefined;
    if (!/^https?:\/\/[^\s/]+/.test(url)) return { message: 'The server is a web address, like https://ferry.example.com.', field: 'server' };
    const current = get().settings ?? (await invoke('settings.get', {}).then((r) => (r.ok ? r.value : undefined)));
    // The server in use (the service on this computer too) is no move: signing in again after a sign-out goes straight to it.
    if (current && current.hosted_url.replace(/\/+$/, '') === url) return undefined;
    // Whatever stops the move is about the server field.
    const refused = await get().saveSettings({ hosted_url: url });
    return refused && { message: refused.message, field: 'server' };
  };
  /** Moves to a route, with an entry in the history when the address changes. */
  const route = (r: Route, extra: Partial<State> = {}) => {
    if (typeof location !== 'undefined' && location.hash !== hashOf(r)) history.pushState(null, '', hashOf(r));
    set({ ...r, ...extra });
  };
  const start = typeof location === 'undefined' ? parseRoute('') : parseRoute(location.hash);
  // An unknown address shows as the Transfers it leads to (no entry: this is where the window starts).
  if (typeof location !== 'undefined' && location.hash !== hashOf(start)) history.replaceState(null, '', hashOf(start));
  return {
    transport,
    connection: 'connecting',
    locked: false,
    ...start,
    link: undefined,
    update: undefined,
    session: undefined,
    settings: undefined,
    automations: undefined,
    gateways: undefined,
    transfers: {},
    stops: {},
    cursor: 0,

    go: (place) => route({ place, detailsOf: undefined }),
    showDetails: (key) => route({ place: 'transfers', detailsOf: key }),
    followAddress() {
      const r = parseRoute(location.hash);
      // An unknown address typed shows as the Transfers it leads to.
      if (location.hash !== hashOf(r)) history.replaceState(null, '', hashOf(r));
      set(r);
    },
    focusTransfer: undefined,
    showTransfer(direction, record) {
      const key = transferKey(direction, record.upload_id);
      const transfers = get().transfers[key] ? get().transfers : { ...get().transfers, [key]: withDirection.upload(record) };
      route({ place: 'transfers', detailsOf: undefined }, { transfers, focusTransfer: key });
    },
    chooseFiles: 0,
    addFiles: () => route({ place: 'send', detailsOf: undefined }, { chooseFiles: get().chooseFiles + 1 }),
    keepLink: (url) => set({ link: url }),
    openLink: (url) => route({ place: 'receive', detailsOf: undefined }, { link: url }),
    call: invoke,

    async loadSession() {
      const r = await invoke('session.current', {});
      if (r.ok) set({ session: r.value });
    },
    async loadSettings() {
      const r = await invoke('settings.get', {});
      if (r.ok) set({ settings: r.value });
    },
    async loadAutomations() {
      const r = await invoke('automations.list', {});
      if (r.ok) set({ automations: Object.fromEntries(r.value.map((a) => [a.automation_id, a])) });
    },
    applyAutomation(change) {
      const automations = { ...get().automations };
      if ('deleted' in change) delete automations[change.automation_id];
      else if (!newer(automations[change.automation_id], change)) automations[change.automation_id] = change;
      set({ automations });
    },
    async loadGateways() {
      const r = await invoke('gateways.list', {});
      if (r.ok) set({ gateways: Object.fromEntries(r.value.map((g) => [g.id, g])) });
    },
    applyGateway(g) {
      const gateways = { ...get().gateways };
      if ('deleted' in g || g.state === 'disconnected') delete gateways[g.id];
      else if (!newer(gateways[g.id], g)) gateways[g.id] = g;
      set({ gateways });
    },
    async saveSettings(change) {
      const waiting = restarted();
      const r = await invoke('settings.update', change);
      if (!r.ok) {
        void waiting.catch(() => undefined);
        return r.error.field ? { message: r.error.message, field: r.error.field } : { message: r.error.message };
      }
      set({ settings: r.value.settings });
      if (!r.value.restarting) return undefined;
      const error = await agentBack(r.value, waiting);
      await get().loadSettings();
      return error;
    },
    async signIn(email, password, server) {
      const moved = await useServer(server);
      if (moved) return moved;
      const r = await invoke('session.login', { email, password });
      if (!r.ok) return signInError(r.error);
      set({ session: r.value });
      return undefined;
    },
    async tryThisComputer() {
      const waiting = restarted();
      const r = await invoke('session.thisComputer', {});
      if (!r.ok) return { message: r.error.message };
      const error = await agentBack(r.value, waiting);
      if (error) return error;
      await get().loadSettings();
      if (r.value.session) set({ session: r.value.session });
      else await get().loadSession();
      return undefined;
    },
    async signInWithKey(key, server) {
      const moved = await useServer(server);
      if (moved) return moved;
      const r = await invoke('session.loginWithApiKey', { api_key: key });
      if (!r.ok) return signInError(r.error, true);
      set({ session: r.value });
      return undefined;
    },
    async signOut() {
      await invoke('session.logout', {});
      // The next sign-in (maybe someone else's, on another server) starts at Transfers.
      route({ place: 'transfers', detailsOf: undefined }, { session: null });
    },

    applySnapshot(s) {
      const transfers: Record<string, Transfer> = {};
      for (const u of s.uploads) transfers[transferKey('upload', u.upload_id)] = withDirection.upload(u);
      for (const d of s.downloads) transfers[transferKey('download', d.download_id)] = withDirection.download(d);
      set({ transfers, stops: stopsAfterSnapshot(get().stops, get().transfers, transfers), cursor: s.cursor });
    },
    applyEvents(batch) {
      const { cursor } = get();
      const transfers = { ...get().transfers };
      let last = cursor;
      const changed: [string, Transfer][] = [];
      for (const e of batch) {
        if (e.id <= cursor) continue; // already in the snapshot
        last = Math.max(last, e.id);
        const key = keyOfChange(e);
        const next = applyChange(transfers[key], e);
        if (next) changed.push([key, (transfers[key] = next)]);
        else delete transfers[key];
      }
      set({ transfers, stops: stopsAfterChanges(get().stops, changed), cursor: last });
    },
  };
  });
}

export type Store = ReturnType<typeof createStore>;

/** Follows the agent: a snapshot, then its events, again after each reconnection. */
export function connect(store: Store): void {
  const { transport } = store.getState();
  transport.onConnection((connection) => store.setState({ connection }));
  // Back and Forward (and an address typed) move between screens.
  if (typeof window !== 'undefined') window.addEventListener('popstate', () => store.getState().followAddress());
  transport.on('transfers.changed', (batch) => store.getState().applyEvents(batch));
  transport.on('session.changed', (s) => {
    if (s.user === null) store.setState({ session: null, automations: undefined });
    else {
      void store.getState().loadSession();
      void store.getState().loadAutomations();
    }
  });
  transport.on('automations.changed', (a) => store.getState().applyAutomation(a));
  transport.on('gateways.changed', (g) => store.getState().applyGateway(g));
  transport.follow(async () => {
    const r = await store.getState().call('transfers.snapshot', {});
    if (!r.ok) throw new Error(r.error.message);
    store.getState().applySnapshot(r.value);
    void store.getState().loadSession();
    void store.getState().loadSettings();
    void store.getState().loadAutomations();
    void store.getState().loadGateways();
    return r.value.cursor;
  });
}
