// Ferry's additions shared by uploads and downloads: a record without its file
// list, the file list in pages, and the changes the event feed carries. A
// transfer of a million files costs the same on every tick as one of a single
// file: its events carry what changed, and its files are read a page at a time.
import { Type, type Static } from 'typebox';
import { DownloadItem, DownloadSummary } from './downloads.js';
import { UploadItem, UploadSummary } from './uploads.js';

export const Direction = Type.Union([Type.Literal('upload'), Type.Literal('download')]);
export type Direction = Static<typeof Direction>;

/** `GET /uploads`, `/uploads/{id}`, `/downloads`, `/downloads/{id}`: `files=false` answers the summary (no `items`). */
export const RecordQuery = Type.Object({ files: Type.Optional(Type.Boolean()) });
export type RecordQuery = Static<typeof RecordQuery>;

export const FILES_PAGE_DEFAULT = 500;
export const FILES_PAGE_MAX = 5000;

/** `GET /uploads/{id}/files`, `GET /downloads/{id}/files`: files in their order, `limit` at a time after the index `after`. */
export const FilesQuery = Type.Object({
  /** The `next` of the page before; absent for the first page. */
  after: Type.Optional(Type.Integer({ minimum: -1, maximum: Number.MAX_SAFE_INTEGER })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FILES_PAGE_MAX })),
});
export type FilesQuery = Static<typeof FilesQuery>;

/** A file's place in its transfer (0, 1, ...): the order of the list, and the key of its changes. */
const Index = { index: Type.Integer({ minimum: 0 }) };
export const IndexedUploadItem = Type.Object({ ...Index, ...UploadItem.properties });
export type IndexedUploadItem = Static<typeof IndexedUploadItem>;
export const IndexedDownloadItem = Type.Object({ ...Index, ...DownloadItem.properties });
export type IndexedDownloadItem = Static<typeof IndexedDownloadItem>;

/**
 * The spec's whole record as the agent sends it: its summary now, its files (in
 * their order) read a page at a time as the text is taken; the text leaves out
 * their `index` (agent/server/recordText.ts). A record of a million files is
 * some 200 MB.
 */
export interface StreamedRecord {
  summary: UploadSummary | DownloadSummary;
  items: Iterable<IndexedUploadItem[] | IndexedDownloadItem[]>;
}

/** The files a whole record reads at a time. */
export const RECORD_PAGE = 1000;

/** Given a transfer's whole record while it is removed: its rows go once this resolves. */
export type KeepRecord = (record: StreamedRecord) => Promise<void>;

/** One page; `next` is the `after` of the following page, null after the last. */
export const UploadFilesPage = Type.Object({ files: Type.Array(IndexedUploadItem), next: Type.Union([Type.Integer(), Type.Null()]) });
export type UploadFilesPage = Static<typeof UploadFilesPage>;
export const DownloadFilesPage = Type.Object({ files: Type.Array(IndexedDownloadItem), next: Type.Union([Type.Integer(), Type.Null()]) });
export type DownloadFilesPage = Static<typeof DownloadFilesPage>;

/** The moving counts of a transfer, sent at most every 250 ms while it moves. */
export const Totals = Type.Object({
  progress: Type.Integer(),
  size: Type.Integer(),
  file_count: Type.Integer(),
  files_done: Type.Integer(),
  updated_at: Type.String(),
});
export type Totals = Static<typeof Totals>;

/**
 * What an `upload` event carries:
 * - `record`: a new upload, or its state, error, wait or place in the queue changed: the whole summary;
 * - `progress`: its totals moved;
 * - `files`: files whose state or progress changed (only to those who follow its files: `/events?files=<upload_id>`);
 * - `removed`: it is gone.
 */
export const UploadChange = Type.Union([
  Type.Object({ change: Type.Literal('record'), upload: UploadSummary }),
  Type.Object({ change: Type.Literal('progress'), upload_id: Type.String(), ...Totals.properties }),
  Type.Object({ change: Type.Literal('files'), upload_id: Type.String(), files: Type.Array(IndexedUploadItem) }),
  Type.Object({ change: Type.Literal('removed'), upload_id: Type.String() }),
]);
export type UploadChange = Static<typeof UploadChange>;

/** What a `download` event carries: as UploadChange. */
export const DownloadChange = Type.Union([
  Type.Object({ change: Type.Literal('record'), download: DownloadSummary }),
  Type.Object({ change: Type.Literal('progress'), download_id: Type.String(), ...Totals.properties }),
  Type.Object({ change: Type.Literal('files'), download_id: Type.String(), files: Type.Array(IndexedDownloadItem) }),
  Type.Object({ change: Type.Literal('removed'), download_id: Type.String() }),
]);
export type DownloadChange = Static<typeof DownloadChange>;
