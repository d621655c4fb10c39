// The desktop app's own channels and events, beside the agent's (contract.ts):
// what main answers itself (the system's dialogs, show in folder, web links, the
// app's settings, restarting into an update) and what main tells the window (the
// agent's connection, a Link to receive, the update's state). Main checks each
// request against its schema behind the one trusted-sender door
// (main/trustedIpc.ts); the window's Transport is typed from these; the preload
// exposes exactly the names of names.ts, which test/unit/ipc/channels.test.ts
// checks against these keys.
import { Type, type Static, type TSchema } from 'typebox';
import type { DESKTOP_CHANNELS, DESKTOP_EVENTS } from './names.js';

const Empty = Type.Object({});
const Done = Type.Object({ done: Type.Literal(true) });
const Paths = Type.Array(Type.String());

/** The app's own settings, as Settings shows them (start at login is the system's). */
export const DesktopSettings = Type.Object({ closeToTray: Type.Boolean(), notifications: Type.Boolean(), startAtLogin: Type.Boolean() });
export type DesktopSettings = Static<typeof DesktopSettings>;

/** The auto-update state main follows (main/updater.ts) and the sidebar shows. */
export const UpdateState = Type.Union([
  Type.Object({ status: Type.Literal('idle') }),
  Type.Object({ status: Type.Literal('available'), version: Type.String() }),
  Type.Object({ status: Type.Literal('downloading'), percent: Type.Number({ minimum: 0, maximum: 100 }) }),
  Type.Object({ status: Type.Literal('ready'), version: Type.String() }),
]);
export type UpdateState = Static<typeof UpdateState>;

/** Whether the agent's process is there (main's supervisor). */
export const Connection = Type.Union([Type.Literal('connecting'), Type.Literal('connected'), Type.Literal('reconnecting')]);
export type Connection = Static<typeof Connection>;

const channel = <Q extends TSchema, A extends TSchema>(request: Q, response: A) => ({ request, response });

/** Request/response channels answered by main. */
export const desktopChannels = {
  /** The system's dialogs: Send's "Add files" and "Add folder"; Receive's "Choose…" (null once canceled). */
  'app.chooseFiles': channel(Empty, Paths),
  'app.chooseFolders': channel(Empty, Paths),
  'app.chooseFolder': channel(Empty, Type.Union([Type.String(), Type.Null()])),
  /** A downloaded file in its folder (an absolute path). */
  'app.showInFolder': channel(Type.Object({ path: Type.String({ minLength: 1, maxLength: 4096 }) }), Done),
  /** An http(s) address, in the system's browser. */
  'app.openExternal': channel(Type.Object({ url: Type.String({ minLength: 1, maxLength: 8192 }) }), Done),
  'app.getSettings': channel(Empty, DesktopSettings),
  /** Any of the settings; others are dropped. */
  'app.setSettings': channel(Type.Partial(DesktopSettings, { additionalProperties: false }), DesktopSettings),
  /** Stops the agent and installs an update once one is ready. */
  'app.restartToUpdate': channel(Empty, Done),
} as const satisfies Record<(typeof DESKTOP_CHANNELS)[number], { request: TSchema; response: TSchema }>;

/** Event channels from main to the window. */
export const desktopEvents = {
  'agent.connection': Connection,
  /** Open Receive with this Link (a ferry:// URL, a Link given on the command line or to a second start). */
  'app.receive': Type.Object({ url: Type.String() }),
  'app.update': UpdateState,
} as const satisfies Record<(typeof DESKTOP_EVENTS)[number], TSchema>;

export type DesktopChannels = typeof desktopChannels;
export type DesktopChannel = keyof DesktopChannels;
export type DesktopRequestOf<C extends DesktopChannel> = Static<DesktopChannels[C]['request']>;
export type DesktopResponseOf<C extends DesktopChannel> = Static<DesktopChannels[C]['response']>;
export type DesktopEvents = typeof desktopEvents;
export type DesktopEventName = keyof DesktopEvents;
export type DesktopEventOf<E extends DesktopEventName> = Static<DesktopEvents[E]>;
