// Wire shapes of the agent's downloads: the REST routes validate with these and
// the CLI client takes its types from them.
import { Type, type Static } from 'typebox';
import { Waiting } from './waiting.js';

export const MiB = 1024 * 1024;
/** Range size when the request names none. */
export const DEFAULT_RANGE_SIZE = 16 * MiB;
const MIN_RANGE_SIZE = MiB;
const MAX_RANGE_SIZE = 1024 * MiB;

const NO_NUL = '^[^\\u0000]*$';

export const CreateDownloadBody = Type.Object({
  /** The Link URL, `{link_url}/{link_id}?secret={secret}`. */
  url: Type.String({ minLength: 1, maxLength: 4096 }),
  /** Absolute; created when missing. */
  dst_folder: Type.String({ minLength: 1, maxLength: 4096, pattern: NO_NUL }),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
  /** Package entries to fetch; a directory's id selects everything beneath it. */
  file_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100_000 })),
  create_package_folder: Type.Optional(Type.Boolean()),
  /** true (default): skip files flagged with malware and fetch the rest; false: refuse a Package with flagged files. */
  bypass_package_quarantine: Type.Optional(Type.Boolean()),
  /** Size of each ranged GET, bytes. */
  chunk_size: Type.Optional(Type.Integer({ minimum: MIN_RANGE_SIZE, maximum: MAX_RANGE_SIZE })),
  priority: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  user_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_294_967_294 })),
  group_id: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_294_967_294 })),
});
export type CreateDownloadBody = Static<typeof CreateDownloadBody>;

export const CreatedDownload = Type.Object({ download_id: Type.String() });
export type CreatedDownload = Static<typeof CreatedDownload>;

const DownloadStateSchema = Type.Union([
  Type.Literal('transferring'),
  Type.Literal('paused'),
  Type.Literal('complete'),
  Type.Literal('error'),
]);
export type DownloadState = Static<typeof DownloadStateSchema>;

export const DownloadItemState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('transferring'),
  Type.Literal('paused'),
  Type.Literal('complete'),
  Type.Literal('skipped'),
  Type.Literal('error'),
]);
export type DownloadItemState = Static<typeof DownloadItemState>;

export const DownloadItem = Type.Object({
  file_id: Type.String(),
  /** The sender's relative path, `folder/name`. */
  path: Type.String(),
  size: Type.Integer(),
  progress: Type.Integer(),
  state: DownloadItemState,
  /** Where the file is written; null until chosen (it may be `name (1).ext`). */
  local_path: Type.Union([Type.String(), Type.Null()]),
  /** Why the entry was skipped or failed. */
  error: Type.Optional(Type.String()),
});
export type DownloadItem = Static<typeof DownloadItem>;

/** Ferry: a download without its file list (`?files=false`, the window, the event feed): the counts instead. */
export const DownloadSummary = Type.Object({
  download_id: Type.String(),
  package_id: Type.String(),
  package_name: Type.String(),
  dst_folder: Type.String(),
  /** Bytes to fetch (skipped entries excluded). */
  size: Type.Integer(),
  progress: Type.Integer(),
  state: DownloadStateSchema,
  priority: Type.Integer(),
  /** Ferry: how many entries it fetches (skipped ones included), and how many of them are complete. */
  file_count: Type.Integer(),
  files_done: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  error: Type.Optional(Type.String()),
  /** Present while a transferring download waits for the service or the store. */
  waiting: Type.Optional(Waiting),
  /** Ferry: present while a transferring download waits for its turn (no range started yet): 1 is the next to start. */
  queue_position: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Ferry: when it was canceled (ISO 8601); its state is then `error` and its error "Canceled". */
  canceled_at: Type.Optional(Type.String()),
});
export type DownloadSummary = Static<typeof DownloadSummary>;

/** The download record: the summary and every entry. */
export const DownloadRecord = Type.Object({ ...DownloadSummary.properties, items: Type.Array(DownloadItem) });
export type DownloadRecord = Static<typeof DownloadRecord>;

export const DownloadList = Type.Array(DownloadRecord);

export const DownloadParams = Type.Object({ download_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });
export type DownloadParams = Static<typeof DownloadParams>;

/** `files=false` (Ferry's addition, as on every route answering records): the summary of what was removed. */
export const DeleteDownloadQuery = Type.Object({ remove_files: Type.Optional(Type.Boolean()), files: Type.Optional(Type.Boolean()) });
export type DeleteDownloadQuery = Static<typeof DeleteDownloadQuery>;

const STATE_LIST = '^(transferring|paused|complete|error)(,(transferring|paused|complete|error))*$';

export const DeleteDownloadsQuery = Type.Object({
  /** Comma-separated states; omitted: every download. */
  states: Type.Optional(Type.String({ pattern: STATE_LIST })),
  remove_files: Type.Optional(Type.Boolean()),
  files: Type.Optional(Type.Boolean()),
});
export type DeleteDownloadsQuery = Static<typeof DeleteDownloadsQuery>;

/** One file of a Link's Package, as the preview lists it. */
export const PreviewFile = Type.Object({ file_id: Type.String(), path: Type.String(), size: Type.Integer() });
export type PreviewFile = Static<typeof PreviewFile>;

/**
 * A Link's Package before anything is downloaded: what "Show files" shows. A
 * Package may hold a million files, so `files` is the first page of them and
 * `next` the cursor of the following one (`downloads.previewFiles`); `file_count`
 * and `size` are the whole Package's.
 */
export const LinkPreview = Type.Object({
  package_id: Type.String(),
  name: Type.String(),
  sender_email: Type.String(),
  /** The sender's message (the Package's description); empty when there is none. */
  description: Type.String(),
  /** When the Link stops working (the earlier of the Link's and the Package's expiry); null when it does not expire. */
  expiry: Type.Union([Type.String(), Type.Null()]),
  /** Bytes of every file of the Package. */
  size: Type.Integer(),
  /** How many files the Package holds. */
  file_count: Type.Integer(),
  files: Type.Array(PreviewFile),
  /** The cursor of the next page of files; null when `files` holds them all. */
  next: Type.Union([Type.String(), Type.Null()]),
});
export type LinkPreview = Static<typeof LinkPreview>;

/** `downloads.previewFiles`: the page of files after `after` (a preview's or a page's `next`). */
export const PreviewFilesRequest = Type.Object({
  url: CreateDownloadBody.properties.url,
  password: CreateDownloadBody.properties.password,
  after: Type.String({ minLength: 1, maxLength: 16_384 }),
});
export type PreviewFilesRequest = Static<typeof PreviewFilesRequest>;

export const PreviewFilesPage = Type.Object({ files: Type.Array(PreviewFile), next: Type.Union([Type.String(), Type.Null()]) });
export type PreviewFilesPage = Static<typeof PreviewFilesPage>;
