// A file's two conversations with the service outside its parts: registration
// (plus starting its multipart upload) and what its finalize says. fileCalls.ts
// sends both.
import type { Blueprint } from '../../api/hosted/blueprint.js';
import type { FinalizeFileBody } from '../../api/hosted/files.js';
import { MAX_CHUNK_SIZE, MIN_CHUNK_SIZE } from '../../api/agent/settings.js';
import type { PartRow, UploadFileRow, UploadRow } from '../store/uploadStore.js';
import type { ObjectHttp } from './objectHttp.js';
import { isTransientStatus, retrying, type EngineTuning, type RetryScope } from './retry.js';
import type { Outages } from './outages.js';
import { chooseChunkSize } from './uploadFile.js';
import type { FileCalls } from './fileCalls.js';

export interface ServiceSide {
  objects: ObjectHttp;
  tuning: EngineTuning;
  outages: Outages;
}

export type Registration = Pick<UploadFileRow, 'file_id' | 's3_upload_id' | 'chunk_size' | 'part_count'>;

/** A store answer worth another try, as an error the retry loop recognises by its status. */
class StoreStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

const xmlText = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

/** A registration, with the part blueprints that came with it (Ferry's services only). */
export interface Registered {
  registration: Registration;
  blueprints: Blueprint[];
}

/**
 * Registers the entry; for a file also starts its multipart upload and picks its
 * chunk size within the limits the registration answered. A pending entry of an
 * earlier attempt at the same place gives way on the service.
 *
 * The service is asked to start the upload itself and to sign the first parts
 * (`count`), and a file of one part to go up in one PutObject (`single`: no
 * multipart upload to start and complete on the store); one that does not runs
 * neither, and then the create blueprint is run here, as the spec says.
 */
export async function registerOnService(s: ServiceSide, calls: FileCalls, u: UploadRow, r: UploadFileRow, scope: RetryScope & { signal: AbortSignal }): Promise<Registered> {
  const isFile = r.kind === 'file';
  // A file still being written is registered without a size (the spec allows it): its part URLs are then not bound to one.
  const growing = isFile && r.growing_quiet_ms != null;
  // Not checked against the walk here: each part is, before it is read, and the file before its finalize.
  // The wished chunk size (within S3's bounds) goes along: a service that binds each part URL
  // to the registered size (Ferry's) takes parts of exactly the chunk size it answers, no other.
  const body = {
    kind: r.kind,
    name: r.name,
    path: r.rel_dir,
    last_modified: new Date(r.mtime_ms).toISOString(),
    ...(isFile ? { chunk_size: Math.min(Math.max(u.chunk_size, MIN_CHUNK_SIZE), MAX_CHUNK_SIZE) } : {}),
    ...(isFile && !growing ? { size: r.size } : {}),
  };
  // Parts at the wished chunk size; the chosen size may differ, and a blueprint too many is never used.
  const parts = Math.ceil(r.size / u.chunk_size);
  // A service that declines `single` (a file larger than its max_chunk_size) answers what `count` asks.
  const q = growing
    ? { count: s.tuning.blueprintBatch }
    : isFile
      ? { count: Math.min(s.tuning.blueprintBatch, Math.max(1, parts)), ...(parts === 1 ? { single: true } : {}) }
      : undefined;
  const reg = await calls.register(body, q);
  if (!isFile || !reg.create_blueprint) {
    return { registration: { file_id: reg.file.id, s3_upload_id: null, chunk_size: null, part_count: 0 }, blueprints: [] };
  }
  // The service's chunk size when it answers one (Ferry's, which it binds the part URLs to); else ours
  // within its limits. A SINGLE_PUT file fits one part either way: this chunk holds it.
  const chunk = reg.file.chunk_size > 0 ? reg.file.chunk_size : chooseChunkSize(u.chunk_size, r.size, { min: reg.min_chunk_size, max: reg.max_chunk_size, maxCount: reg.max_chunk_count });
  const uploadId = reg.upload_id ?? (await startUpload(s, r, reg.create_blueprint, scope));
  return {
    // A growing file's part count is known once it stops growing (growingFile.ts).
    registration: { file_id: reg.file.id, s3_upload_id: uploadId, chunk_size: chunk, part_count: growing ? null : r.size === 0 ? 0 : Math.ceil(r.size / chunk) },
    blueprints: reg.upload_id ? (reg.upload_blueprints ?? []) : [],
  };
}

/** Runs the create blueprint on the store; resolves the UploadId it answers. */
async function startUpload(s: ServiceSide, r: UploadFileRow, bp: Blueprint, scope: RetryScope & { signal: AbortSignal }): Promise<string> {
  const started = await retrying(
    async () => {
      const a = await s.objects.send(bp, scope.signal);
      if (isTransientStatus(a.status)) {
        const after = a.headers['retry-after'];
        throw new StoreStatusError(a.status, `the store answered ${a.status} when starting ${r.local_path}`, Array.isArray(after) ? after[0] : after);
      }
      return a;
    },
    s.outages.target('store', bp.url),
    scope,
  );
  const m = /<UploadId>([^<]+)<\/UploadId>/.exec(started.text);
  if (started.status !== 200 || !m) throw new Error(`the store refused to start the upload of ${r.local_path} (${started.status})`);
  return xmlText(m[1]!);
}

/** What a file's finalize says: its recorded parts (an empty file has none), its upload and size. */
export function finalizeBody(r: UploadFileRow, parts: PartRow[]): FinalizeFileBody {
  return {
    chunk_extras: [...parts].sort((a, b) => a.part_number - b.part_number).map((p) => ({ part_number: String(p.part_number), etag: p.etag })),
    file_extras: { upload_id: r.s3_upload_id! },
    size: r.size,
    ...(r.chunk_size ? { chunk_size: r.chunk_size } : {}),
  };
}
