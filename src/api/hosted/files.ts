// Wire shapes of the upload flow (register, chunk blueprints, finalize) and of
// the download flow (file list, download URL).
import { Type, type Static } from 'typebox';
import { Blueprint } from './blueprint.js';

/** No NUL byte anywhere; names also refuse both path separators. */
const NO_NUL = '^[^\\u0000]*$';
const NAME = '^[^\\u0000/\\\\]+$';

export const FileParams = Type.Object({
  package_id: Type.String({ minLength: 1, maxLength: 100 }),
  file_id: Type.String({ minLength: 1, maxLength: 100 }),
});
export type FileParams = Static<typeof FileParams>;

/** At most this many part blueprints per request. */
export const MAX_BLUEPRINTS_PER_REQUEST = 1000;

export const RegisterFileBody = Type.Object({
  kind: Type.Union([Type.Literal('file'), Type.Literal('directory')]),
  name: Type.String({ minLength: 1, maxLength: 255, pattern: NAME }),
  /** Relative folder of the entry, `/`-separated; empty for the Package root. */
  path: Type.String({ maxLength: 4096, pattern: NO_NUL }),
  last_modified: Type.String({ format: 'date-time' }),
  size: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  chunk_size: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
});
export type RegisterFileBody = Static<typeof RegisterFileBody>;

/**
 * Ferry's additions to the spec's registration. With `count`, the service starts
 * the file's multipart upload itself and answers its id with the blueprints of
 * parts 1..count, which saves the client two round trips. With `single`, a file
 * of 1 byte up to `max_chunk_size` goes up in one PutObject instead: the answer's
 * `upload_id` is SINGLE_PUT and its one blueprint puts the whole object. A file
 * that cannot (no size, empty, larger) gets what `count` asks, or the spec's answer.
 */
export const RegisterFileQuery = Type.Object({
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BLUEPRINTS_PER_REQUEST })),
  single: Type.Optional(Type.Boolean()),
});
export type RegisterFileQuery = Static<typeof RegisterFileQuery>;

export const FileKind = Type.Union([
  Type.Literal('file'),
  Type.Literal('directory'),
  Type.Literal('zip_windows'),
  Type.Literal('zip_mac'),
]);

export const FileObject = Type.Object({
  id: Type.String(),
  kind: FileKind,
  name: Type.String(),
  path: Type.String(),
  last_modified: Type.String(),
  /** Omitted for the zip kinds. */
  size: Type.Optional(Type.Integer()),
  virus_detected: Type.Boolean(),
  /**
   * The malware scan of a file (service started with --clamd): pending, clean,
   * infected or failed. Omitted when the file was not scanned, and for folders and zips.
   */
  scan_state: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('clean'), Type.Literal('infected'), Type.Literal('failed')])),
});
export type FileObject = Static<typeof FileObject>;

export const RegisteredFile = Type.Object({
  ...FileObject.properties,
  /** The chunk size the service recommends for this file (see docs/hosted-api-notes/uploads-downloads.md). */
  chunk_size: Type.Integer(),
});

export const RegisterFileAnswer = Type.Object({
  /** null for directories, which have no content to upload. */
  create_blueprint: Type.Union([Blueprint, Type.Null()]),
  file: RegisteredFile,
  /**
   * Only when `count` or `single` was asked for a file: the upload the service
   * started, and its first part blueprints (SINGLE_PUT, and the one PutObject blueprint).
   */
  upload_id: Type.Optional(Type.String()),
  upload_blueprints: Type.Optional(Type.Array(Blueprint)),
  max_chunk_count: Type.Integer(),
  max_chunk_size: Type.Integer(),
  min_chunk_size: Type.Integer(),
});
export type RegisterFileAnswer = Static<typeof RegisterFileAnswer>;

export const PartBlueprintsQuery = Type.Object({
  start: Type.Integer({ minimum: 0, maximum: 9999 }),
  count: Type.Integer({ minimum: 1, maximum: MAX_BLUEPRINTS_PER_REQUEST }),
});
export type PartBlueprintsQuery = Static<typeof PartBlueprintsQuery>;

/**
 * The `upload_id` of a file that goes up in one PutObject (`single`): it names no
 * multipart upload. Part blueprints for it (start 0) answer the PutObject blueprint
 * again, and its finalize names part 1 with the object's ETag.
 */
export const SINGLE_PUT = 'single-put';

export const UploadIdBody = Type.Object({ upload_id: Type.String({ minLength: 1, maxLength: 1024, pattern: NO_NUL }) });
export type UploadIdBody = Static<typeof UploadIdBody>;

export const PartBlueprintsAnswer = Type.Array(Blueprint);

export const ChunkExtra = Type.Object({
  /** Clients send the number as a string or a number, under either name. */
  part_number: Type.Optional(Type.Union([Type.String({ maxLength: 10 }), Type.Integer()])),
  partNumber: Type.Optional(Type.Union([Type.String({ maxLength: 10 }), Type.Integer()])),
  /** With or without the surrounding quotes S3 puts on it. */
  etag: Type.String({ minLength: 1, maxLength: 256 }),
});
export type ChunkExtra = Static<typeof ChunkExtra>;

export const FinalizeFileBody = Type.Object({
  chunk_extras: Type.Array(ChunkExtra, { maxItems: 10_000 }),
  file_extras: UploadIdBody,
  size: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  chunk_size: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
});
export type FinalizeFileBody = Static<typeof FinalizeFileBody>;

/** At most this many files per batch registration. */
export const MAX_FILES_PER_REGISTER = 100;

/**
 * Ferry's addition: `POST /v1/packages/{id}/register_files` registers several
 * entries, each exactly as its own registration would (with its own `count`).
 */
export const RegisterFilesBody = Type.Object({
  files: Type.Array(Type.Object({ ...RegisterFileBody.properties, ...RegisterFileQuery.properties }), {
    minItems: 1,
    maxItems: MAX_FILES_PER_REGISTER,
  }),
});
export type RegisterFilesBody = Static<typeof RegisterFilesBody>;

/** One entry's outcome: 201 with what its own registration would have answered, or the refusal's status, code and message. */
export const RegisterOutcome = Type.Object({
  status: Type.Integer(),
  code: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  registration: Type.Optional(RegisterFileAnswer),
});
export type RegisterOutcome = Static<typeof RegisterOutcome>;

/** In the order of the request's files. */
export const RegisterFilesAnswer = Type.Object({ results: Type.Array(RegisterOutcome) });
export type RegisterFilesAnswer = Static<typeof RegisterFilesAnswer>;

/** At most this many files per batch finalize. */
export const MAX_FILES_PER_FINALIZE = 100;

/**
 * Ferry's addition: `POST /v1/packages/{id}/finalize_files` finalizes several
 * files, each exactly as its own file finalize would.
 */
export const FinalizeFilesBody = Type.Object({
  files: Type.Array(
    Type.Object({ file_id: Type.String({ minLength: 1, maxLength: 100 }), ...FinalizeFileBody.properties }),
    { minItems: 1, maxItems: MAX_FILES_PER_FINALIZE },
  ),
});
export type FinalizeFilesBody = Static<typeof FinalizeFilesBody>;

/** One file's outcome: the status its own finalize would have answered, with `{code, message}` unless 204. */
export const FileOutcome = Type.Object({
  file_id: Type.String(),
  status: Type.Integer(),
  code: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type FileOutcome = Static<typeof FileOutcome>;

/** In the order of the request's files. */
export const FinalizeFilesAnswer = Type.Object({ results: Type.Array(FileOutcome) });
export type FinalizeFilesAnswer = Static<typeof FinalizeFilesAnswer>;

export const FileList = Type.Array(FileObject);

export const FILES_PAGE_DEFAULT = 1000;
export const FILES_PAGE_MAX = 5000;

/**
 * Ferry's addition to `GET /v1/packages/{id}/files`: with `limit` or `after`, the
 * answer is one FilePage instead of the spec's whole array. `after` is the `next`
 * of the page before (opaque: base64url of the last entry's place in the order).
 */
export const FilesPageQuery = Type.Object({
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 16_384, pattern: '^[A-Za-z0-9_-]+$' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FILES_PAGE_MAX })),
});
export type FilesPageQuery = Static<typeof FilesPageQuery>;

/**
 * One page of a Package's finalized entries (files and folders, no ZIP entries),
 * in the whole list's order; `next` is the `after` of the following page, null after the last.
 */
export const FilePage = Type.Object({
  files: Type.Array(FileObject),
  next: Type.Union([Type.String(), Type.Null()]),
});
export type FilePage = Static<typeof FilePage>;

export const ZIP_KINDS = ['zip_windows', 'zip_mac'] as const;
export type ZipVariant = (typeof ZIP_KINDS)[number];

export const DownloadQuery = Type.Object({ expiry: Type.Optional(Type.String({ format: 'date-time' })) });
export type DownloadQuery = Static<typeof DownloadQuery>;

export const DownloadAnswer = Type.Object({ method: Type.Literal('GET'), url: Type.String() });
export type DownloadAnswer = Static<typeof DownloadAnswer>;

export const MAX_FILES_PER_DOWNLOAD_URLS = 100;

/**
 * Ferry's addition: `POST /v1/packages/{id}/download_urls` answers the download
 * URLs of several files, each exactly as its own `GET .../files/{file}/download`
 * would (with the same optional `expiry`).
 */
export const DownloadUrlsBody = Type.Object({
  files: Type.Array(Type.Object({ file_id: Type.String({ minLength: 1, maxLength: 100 }) }), { minItems: 1, maxItems: MAX_FILES_PER_DOWNLOAD_URLS }),
  expiry: Type.Optional(Type.String({ format: 'date-time' })),
});
export type DownloadUrlsBody = Static<typeof DownloadUrlsBody>;

/** One file's outcome: 200 with its `url`, or the status and `{code, message}` its own request would have answered. */
export const DownloadUrlOutcome = Type.Object({
  file_id: Type.String(),
  status: Type.Integer(),
  url: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type DownloadUrlOutcome = Static<typeof DownloadUrlOutcome>;

/** In the order of the request's files. */
export const DownloadUrlsAnswer = Type.Object({ results: Type.Array(DownloadUrlOutcome) });
export type DownloadUrlsAnswer = Static<typeof DownloadUrlsAnswer>;

export const ZipParams = Type.Object({
  package_id: Type.String({ minLength: 1, maxLength: 100 }),
  variant: Type.Union([Type.Literal('zip_windows'), Type.Literal('zip_mac')]),
});
export type ZipParams = Static<typeof ZipParams>;

export const ZipQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 4096 })),
  /** An addition: only these files (ids, repeat the parameter), as the Link page's selection asks. */
  file: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 10_000 })),
});
export type ZipQuery = Static<typeof ZipQuery>;
