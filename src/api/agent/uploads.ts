// Wire shapes of the agent's Uploads group: POST /uploads (Team), POST
// /portals/uploads, the upload record, pause/resume/delete, finalize, link.
import { Type, type Static } from 'typebox';
import { LinkObject } from '../hosted/links.js';
import { TagRef } from '../hosted/tags.js';
import { Waiting } from './waiting.js';

const NoNul = '^[^\\u0000]*$';
const Email = Type.String({ format: 'email', maxLength: 254 });
/** Absolute local paths; that they exist and are absolute is checked by the service (400). */
const Paths = Type.Array(Type.String({ minLength: 1, maxLength: 4096, pattern: NoNul }), { minItems: 1, maxItems: 10_000 });
/** Any positive size: it is clamped to the store's limits and raised to fit max_chunk_count. */
const ChunkSize = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Priority = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 });
const PackageName = Type.String({ minLength: 1, maxLength: 255, pattern: NoNul });
const Description = Type.String({ maxLength: 10_000, pattern: NoNul });

export const CreateUploadBody = Type.Object({
  team_id: Type.String({ minLength: 1, maxLength: 100 }),
  paths: Paths,
  /** With recipients the Package is e-mailed; without, it is a link-type upload. */
  recipients: Type.Optional(Type.Array(Email, { maxItems: 1000 })),
  package_name: Type.Optional(PackageName),
  package_description: Type.Optional(Description),
  chunk_size: Type.Optional(ChunkSize),
  priority: Type.Optional(Priority),
  password: Type.Optional(Type.String({ maxLength: 200, pattern: NoNul })),
  /** Days to keep the Package, counted from its finalization. */
  delete_after: Type.Optional(Type.Integer({ minimum: 1, maximum: 36_500 })),
  download_limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  tag: Type.Optional(TagRef),
  teamspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  unlimited_storage: Type.Optional(Type.Boolean()),
});
export type CreateUploadBody = Static<typeof CreateUploadBody>;

export const PortalUploadBody = Type.Object({
  subdomain: Type.String({ minLength: 1, maxLength: 100 }),
  sender_email: Email,
  paths: Paths,
  access_code: Type.Optional(Type.String({ maxLength: 1024 })),
  /** Keys of up to 255 characters (a Record's key schema is not checked, hence propertyNames). */
  metadata: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 10_000 }), { propertyNames: { maxLength: 255 } })),
  package_name: Type.Optional(PackageName),
  package_description: Type.Optional(Description),
  chunk_size: Type.Optional(ChunkSize),
  priority: Type.Optional(Priority),
  /** An addition: the sender accepts the Portal's terms of service (required when it has them). */
  accept_terms: Type.Optional(Type.Boolean()),
});
export type PortalUploadBody = Static<typeof PortalUploadBody>;

const UPLOAD_STATES = ['transferring', 'paused', 'idle', 'complete', 'error'] as const;
export type UploadState = (typeof UPLOAD_STATES)[number];
const UploadStateSchema = Type.Union([
  Type.Literal('transferring'),
  Type.Literal('paused'),
  Type.Literal('idle'),
  Type.Literal('complete'),
  Type.Literal('error'),
]);

/** Not started yet (`queued`, as a download's entry), on its way, complete, or held by the upload being paused or failed. */
export const UploadItemState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('transferring'),
  Type.Literal('paused'),
  Type.Literal('complete'),
  Type.Literal('error'),
]);
export type UploadItemState = Static<typeof UploadItemState>;

/** A file (or empty folder) of an upload: `path` and `local_path` name what they name on a download's entry. */
export const UploadItem = Type.Object({
  /** Its place in the Package: folders joined with `/`, then the file name. */
  path: Type.String(),
  /** The local file (or empty folder) it is read from. */
  local_path: Type.String(),
  size: Type.Integer(),
  /** Bytes stored and recorded. */
  progress: Type.Integer(),
  state: UploadItemState,
});
export type UploadItem = Static<typeof UploadItem>;

/** Ferry: an upload without its file list (`?files=false`, the window, the event feed): the counts instead. */
export const UploadSummary = Type.Object({
  upload_id: Type.String(),
  package_id: Type.String(),
  /** What the upload is called here: the first path's name (and how many more). */
  name: Type.String(),
  package_name: Type.String(),
  progress: Type.Integer(),
  size: Type.Integer(),
  state: UploadStateSchema,
  type: Type.Union([Type.Literal('team'), Type.Literal('portal')]),
  /** Ferry: how many files (and empty folders) it holds, and how many of them are complete. */
  file_count: Type.Integer(),
  files_done: Type.Integer(),
  /** Ferry: an e-mailed Team upload's recipients, as sent; absent for a link-type or Portal upload. */
  recipients: Type.Optional(Type.Array(Type.String())),
  created_at: Type.String(),
  updated_at: Type.String(),
  error: Type.Optional(Type.String()),
  /** Present while a transferring upload waits for the service or the store. */
  waiting: Type.Optional(Waiting),
  /** Ferry: present while a transferring upload waits for its turn (no part started yet): 1 is the next to start. */
  queue_position: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Ferry: when it was canceled (ISO 8601); its state is then `error` and its error "Canceled". */
  canceled_at: Type.Optional(Type.String()),
});
export type UploadSummary = Static<typeof UploadSummary>;

/** The spec's upload record: the summary and every file. */
export const UploadRecord = Type.Object({ ...UploadSummary.properties, items: Type.Array(UploadItem) });
export type UploadRecord = Static<typeof UploadRecord>;

export const UploadList = Type.Array(UploadRecord);

export const UploadParams = Type.Object({ upload_id: Type.String({ minLength: 1, maxLength: 100 }) });
export type UploadParams = Static<typeof UploadParams>;

/** `DELETE /uploads?states=complete,error`; without it every upload. */
export const DeleteUploadsQuery = Type.Object({
  states: Type.Optional(Type.String({ pattern: `^(${UPLOAD_STATES.join('|')})(,(${UPLOAD_STATES.join('|')}))*$` })),
  files: Type.Optional(Type.Boolean()),
});
export type DeleteUploadsQuery = Static<typeof DeleteUploadsQuery>;

export const UploadLinkBody = Type.Object({
  active: Type.Optional(Type.Boolean()),
  /** Omitted: the Package's download limit; null: unlimited. */
  access_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()])),
  email: Type.Optional(Email),
  expiry: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
});
export type UploadLinkBody = Static<typeof UploadLinkBody>;

/** The spec's Shareable Link result, plus its download address. */
export const UploadLinkAnswer = Type.Object({
  id: Type.String(),
  secret: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  expiry: Type.Union([Type.String(), Type.Null()]),
  locked: Type.Boolean(),
  url: Type.String(),
});
export type UploadLinkAnswer = Static<typeof UploadLinkAnswer>;

export const UploadLinkParams = Type.Object({ ...UploadParams.properties, link_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
export type UploadLinkParams = Static<typeof UploadLinkParams>;

/** One Link of an upload's Package, as link management shows it: the service's Link, and what this agent knows of it. */
export const UploadLinkEntry = Type.Object({
  ...Type.Omit(LinkObject, ['package_id']).properties,
  /** Its address when this agent made it; null for a Link made elsewhere (the service shows a secret only once). */
  url: Type.Union([Type.String(), Type.Null()]),
  /** The transfer's own Link: the one "Copy link" copies. */
  transfer: Type.Boolean(),
});
export type UploadLinkEntry = Static<typeof UploadLinkEntry>;
export const UploadLinkList = Type.Array(UploadLinkEntry);

export const FinalizeAnswer = Type.Object({ code: Type.Integer() });
export type FinalizeAnswer = Static<typeof FinalizeAnswer>;
