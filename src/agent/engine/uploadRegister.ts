// A file's two conversations with the service outside its parts: registration
// (plus starting its multipart upload on the store) and its finalize.
import { finalizeFile, registerFile } from '../../client/uploads.js';
import type { HostedHttp } from '../../client/http.js';
import type { PartRow, UploadFileRow, UploadRow } from '../store/uploadStore.js';
import type { ObjectHttp } from './objectHttp.js';
import { isTransientStatus, retrying, type EngineTuning } from './retry.js';
import { chooseChunkSize } from './uploadFile.js';
import { checkUnchanged } from './partUpload.js';

export interface ServiceSide {
  hosted: HostedHttp;
  objects: ObjectHttp;
  tuning: EngineTuning;
}

export type Registration = Pick<UploadFileRow, 'file_id' | 's3_upload_id' | 'chunk_size' | 'part_count'>;

/** A store answer worth another try, as an error the retry loop recognises. */
class StoreStatusError extends Error {
  readonly code = 'STORE_STATUS';
}

const xmlText = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

const callOf = (u: UploadRow, signal: AbortSignal) => ({ auth: { packageToken: u.package_token }, signal });

/**
 * Registers the entry; for a file also runs its create blueprint and picks its
 * chunk size within the limits the registration answered. A pending entry of an
 * earlier attempt at the same place gives way on the service.
 */
export async function registerOnService(s: ServiceSide, u: UploadRow, r: UploadFileRow, signal: AbortSignal): Promise<Registration> {
  const isFile = r.kind === 'file';
  // Not checked against the walk here: each part is, before it is read, and the file before its finalize.
  const body = {
    kind: r.kind,
    name: r.name,
    path: r.rel_dir,
    last_modified: new Date(r.mtime_ms).toISOString(),
    ...(isFile ? { size: r.size } : {}),
  };
  const reg = await retrying(() => registerFile(s.hosted, u.package_id, body, callOf(u, signal)), s.tuning.retry, signal);
  if (!isFile || !reg.create_blueprint) return { file_id: reg.file.id, s3_upload_id: null, chunk_size: null, part_count: 0 };

  const chunk = chooseChunkSize(u.chunk_size, r.size, { min: reg.min_chunk_size, max: reg.max_chunk_size, maxCount: reg.max_chunk_count });
  const bp = reg.create_blueprint;
  const started = await retrying(
    async () => {
      const a = await s.objects.send(bp, signal);
      if (isTransientStatus(a.status)) throw new StoreStatusError(`the store answered ${a.status} when starting ${r.local_path}`);
      return a;
    },
    s.tuning.retry,
    signal,
  );
  const m = /<UploadId>([^<]+)<\/UploadId>/.exec(started.text);
  if (started.status !== 200 || !m) throw new Error(`the store refused to start the upload of ${r.local_path} (${started.status})`);
  return { file_id: reg.file.id, s3_upload_id: xmlText(m[1]!), chunk_size: chunk, part_count: r.size === 0 ? 0 : Math.ceil(r.size / chunk) };
}

/** Completes the file on the service from the recorded parts (an empty file has none). */
export async function finalizeOnServiceFile(s: ServiceSide, u: UploadRow, r: UploadFileRow, parts: PartRow[], signal: AbortSignal): Promise<void> {
  await checkUnchanged(r);
  const body = {
    chunk_extras: [...parts].sort((a, b) => a.part_number - b.part_number).map((p) => ({ part_number: String(p.part_number), etag: p.etag })),
    file_extras: { upload_id: r.s3_upload_id! },
    size: r.size,
    ...(r.chunk_size ? { chunk_size: r.chunk_size } : {}),
  };
  await retrying(() => finalizeFile(s.hosted, u.package_id, r.file_id!, body, callOf(u, signal)), s.tuning.retry, signal);
}
