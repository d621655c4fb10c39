// The IPC contract between the app's window and the agent (docs/architecture.md, principle 2): every
// request channel with the schema of its request and of its answer, and every
// event channel with its payload. The handler table (handlers.ts) answers these
// beside the agent; the Electron preload exposes exactly these channels; the
// browser transport sends them over HTTP and a WebSocket. Shapes come from
// src/api wherever the REST API already has them.
import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import { LoginBody, SessionAnswer, SessionUser, TeamList } from '../api/agent/session.js';
import { CreateUploadBody, PortalUploadBody, UploadLinkAnswer, UploadLinkBody, UploadLinkEntry, UploadLinkList, UploadLinkParams, UploadSummary } from '../api/agent/uploads.js';
import { CreateDownloadBody, CreatedDownload, DownloadSummary, LinkPreview, PreviewFilesPage, PreviewFilesRequest } from '../api/agent/downloads.js';
import { DownloadChange, DownloadFilesPage, FilesQuery, UploadChange, UploadFilesPage } from '../api/agent/transfers.js';
import { FolderListing, PathsMeasure } from '../api/agent/folders.js';
import { About } from '../api/agent/system.js';
import { BundleAnswer, BundleBody, Diagnostics } from '../api/agent/diagnostics.js';
import { AgentSettings, SettingsAnswer, SettingsChange, ThisComputerAnswer } from '../api/agent/settings.js';
import { GatewayList, GatewayRecord, NewConnectionAnswer, NewConnectionBody, RegisterGatewayBody, UnregisterGatewayBody, UpdateGatewayBody } from '../api/agent/storageGateway.js';
import { DiskChange, DiskIdParams, Disk, DiskList, DiskStatusList } from '../api/agent/disks.js';
import { AutomationList, AutomationPackageList, AutomationParams, AutomationRecord, CREATE_BODIES, UPDATE_BODIES } from '../api/agent/automations.js';

const Empty = Type.Object({});
const UploadId = Type.Object({ upload_id: Type.String({ minLength: 1, maxLength: 100 }) });
const DownloadId = Type.Object({ download_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });
const Done = Type.Object({ done: Type.Literal(true) });

/** One automation's kind and its fields, as POST /automations/{type} (create) or PUT (update) take them. */
function automationBody<B extends typeof CREATE_BODIES | typeof UPDATE_BODIES, P extends TProperties>(bodies: B, extra: P) {
  return Type.Union([
    Type.Object({ ...extra, type: Type.Literal('portal_download'), fields: bodies.portal_download }),
    Type.Object({ ...extra, type: Type.Literal('all_portals_download'), fields: bodies.all_portals_download }),
    Type.Object({ ...extra, type: Type.Literal('team_upload'), fields: bodies.team_upload }),
    Type.Object({ ...extra, type: Type.Literal('portal_upload'), fields: bodies.portal_upload }),
  ]);
}

/** Every transfer (summaries: no file lists) and the id of the last event they include: events after it apply on top. */
export const TransfersSnapshot = Type.Object({ cursor: Type.Integer(), uploads: Type.Array(UploadSummary), downloads: Type.Array(DownloadSummary) });
export type TransfersSnapshot = Static<typeof TransfersSnapshot>;

const channel = <Q extends TSchema, A extends TSchema>(request: Q, response: A) => ({ request, response });

/** Request/response channels. */
export const channels = {
  'session.current': channel(Empty, Type.Union([SessionAnswer, Type.Null()])),
  'session.login': channel(LoginBody, SessionAnswer),
  'session.loginWithApiKey': channel(Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 1024 }) }), SessionAnswer),
  'session.logout': channel(Empty, Done),
  /** "Try it on this computer". */
  'session.thisComputer': channel(Empty, ThisComputerAnswer),
  'teams.list': channel(Empty, TeamList),

  'transfers.snapshot': channel(Empty, TransfersSnapshot),

  'uploads.create': channel(CreateUploadBody, UploadSummary),
  'uploads.createPortal': channel(PortalUploadBody, UploadSummary),
  'uploads.pause': channel(UploadId, UploadSummary),
  'uploads.resume': channel(UploadId, UploadSummary),
  'uploads.remove': channel(UploadId, UploadSummary),
  /** Stops it and keeps it in the history as canceled. */
  'uploads.cancel': channel(UploadId, UploadSummary),
  'uploads.pauseAll': channel(Empty, Type.Array(UploadSummary)),
  'uploads.resumeAll': channel(Empty, Type.Array(UploadSummary)),
  /** Its files, a page at a time (the details view). */
  'uploads.files': channel(Type.Object({ ...UploadId.properties, ...FilesQuery.properties }), UploadFilesPage),
  'uploads.link': channel(Type.Object({ ...UploadId.properties, ...UploadLinkBody.properties }), UploadLinkAnswer),
  'uploads.transferLink': channel(UploadId, UploadLinkAnswer),
  'uploads.links': channel(UploadId, UploadLinkList),
  'uploads.revokeLink': channel(UploadLinkParams, UploadLinkEntry),

  'downloads.preview': channel(Type.Object({ url: CreateDownloadBody.properties.url, password: CreateDownloadBody.properties.password }), LinkPreview),
  /** The preview's next page of files (its `next`, then each page's). */
  'downloads.previewFiles': channel(PreviewFilesRequest, PreviewFilesPage),
  'downloads.create': channel(CreateDownloadBody, CreatedDownload),
  'downloads.pause': channel(DownloadId, DownloadSummary),
  'downloads.resume': channel(DownloadId, DownloadSummary),
  'downloads.remove': channel(Type.Object({ ...DownloadId.properties, remove_files: Type.Optional(Type.Boolean()) }), DownloadSummary),
  /** Stops it and keeps it in the history as canceled (finished files stay, partial ones go). */
  'downloads.cancel': channel(DownloadId, DownloadSummary),
  'downloads.pauseAll': channel(Empty, Type.Array(DownloadSummary)),
  'downloads.resumeAll': channel(Empty, Type.Array(DownloadSummary)),
  /** Its entries, a page at a time (the details view). */
  'downloads.files': channel(Type.Object({ ...DownloadId.properties, ...FilesQuery.properties }), DownloadFilesPage),

  'automations.list': channel(Empty, AutomationList),
  'automations.create': channel(automationBody(CREATE_BODIES, {}), AutomationRecord),
  'automations.update': channel(automationBody(UPDATE_BODIES, AutomationParams.properties), AutomationRecord),
  'automations.setEnabled': channel(Type.Object({ ...AutomationParams.properties, enabled: Type.Boolean() }), AutomationRecord),
  'automations.remove': channel(AutomationParams, AutomationRecord),
  'automations.packages': channel(AutomationParams, AutomationPackageList),

  'gateways.list': channel(Empty, GatewayList),
  'gateways.register': channel(RegisterGatewayBody, GatewayRecord),
  'gateways.update': channel(UpdateGatewayBody, GatewayRecord),
  'gateways.unregister': channel(UnregisterGatewayBody, GatewayRecord),
  'gateways.createConnection': channel(NewConnectionBody, NewConnectionAnswer),

  'system.about': channel(Empty, About),
  'settings.get': channel(Empty, AgentSettings),
  'settings.update': channel(SettingsChange, SettingsAnswer),
  /** As GET /diagnostics: Settings' "About this computer". */
  'diagnostics.get': channel(Empty, Diagnostics),
  /** As POST /diagnostics/bundle: "Make a support bundle". */
  'diagnostics.bundle': channel(BundleBody, BundleAnswer),
  'disks.list': channel(Empty, DiskList),
  'disks.status': channel(Empty, DiskStatusList),
  'disks.update': channel(Type.Object({ ...DiskIdParams.properties, change: DiskChange }), Disk),
  'fs.list': channel(Type.Object({ path: Type.Optional(Type.String({ maxLength: 4096, pattern: '^[^\\u0000]*$' })) }), FolderListing),
  'fs.measure': channel(Type.Object({ paths: CreateUploadBody.properties.paths }), PathsMeasure),
} as const;

export type Channels = typeof channels;
export type Channel = keyof Channels;
export type RequestOf<C extends Channel> = Static<Channels[C]['request']>;
export type ResponseOf<C extends Channel> = Static<Channels[C]['response']>;

/** One change of a transfer, as the agent's event feed carries it (`id` orders it against a snapshot's cursor). */
export const TransferEvent = Type.Union([
  Type.Object({ id: Type.Integer(), type: Type.Literal('upload'), data: UploadChange }),
  Type.Object({ id: Type.Integer(), type: Type.Literal('download'), data: DownloadChange }),
]);
export type TransferEvent = Static<typeof TransferEvent>;

/** Event channels, from the agent's side to the window. */
export const events = {
  /** Changes of transfers (records, totals, removals; throttled at the source), sent together: one batch per 100 ms at most. */
  'transfers.changed': Type.Array(TransferEvent),
  'session.changed': Type.Object({ user: Type.Union([SessionUser, Type.Null()]) }),
  /** An automation's record as it now is, or `{automation_id, deleted: true}` once removed. */
  'automations.changed': Type.Union([AutomationRecord, Type.Object({ automation_id: Type.String(), deleted: Type.Literal(true) })]),
  /** A storage gateway's record as it now is, or `{id, deleted: true}` once unregistered. */
  'gateways.changed': Type.Union([GatewayRecord, Type.Object({ id: Type.String(), deleted: Type.Literal(true) })]),
} as const;

export type Events = typeof events;
export type EventName = keyof Events;
export type EventOf<E extends EventName> = Static<Events[E]>;

/** What every request answers across a boundary (docs/architecture.md, principle 4): errors are data. */
/** An error's `field` (a request that does not fit its schema) is the path of the value at fault: `recipients/0`, `fields/recipients/0`. */
export type Answer<T> = { ok: true; value: T } | { ok: false; error: { code: number; message: string; field?: string } };
