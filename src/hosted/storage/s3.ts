// The service's view of object storage: pre-signed blueprints for clients, and
// the few calls the service makes itself (complete, size checks, ZIP reads, deletes).
// It speaks plain S3, so the embedded store and any S3-compatible store work alike.
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  type Part,
} from '@aws-sdk/client-s3';
import { request } from 'undici';
import type { Blueprint } from '../../api/hosted/blueprint.js';
import { isMissingUpload } from './failure.js';
import { createPresigner, type Presign, type PresignMethod } from './presign.js';

export interface S3Settings {
  endpoint: string;
  region: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  pathStyle: boolean;
}

export interface StoredPart { partNumber: number; etag: string; size: number }

export interface Storage {
  readonly bucket: string;
  /** The origin blueprint and download URLs point at (what a page's CSP must let it connect to). */
  readonly origin: string;
  ensureBucket(): Promise<void>;
  /** Whether the store answers for the bucket (HeadBucket), within `timeoutMs`: /readyz. */
  ping(timeoutMs: number): Promise<void>;
  createUploadBlueprint(key: string): Promise<Blueprint>;
  /** Starts a multipart upload of `key` itself (what the create blueprint does for a client); resolves its id. */
  createUpload(key: string): Promise<string>;
  /**
   * Part blueprints firstPart..firstPart+count-1. With `lengthOf`, each signs its
   * part's Content-Length: the store refuses a body of another length, so a file
   * registered with a size takes exactly that many bytes.
   */
  partBlueprints(key: string, uploadId: string, firstPart: number, count: number, lengthOf?: (part: number) => number): Promise<Blueprint[]>;
  /** A PutObject of `key` in one request, for a file that goes up whole (SINGLE_PUT); `length` bound as for parts. */
  putBlueprint(key: string, length?: number): Promise<Blueprint>;
  listParts(key: string, uploadId: string): Promise<StoredPart[]>;
  /** Whether `uploadId` is an open multipart upload of `key`. */
  uploadExists(key: string, uploadId: string): Promise<boolean>;
  completeUpload(key: string, uploadId: string, parts: { partNumber: number; etag: string }[]): Promise<void>;
  /**
   * Where the store can: completes only when the named parts are stored with those
   * ETags, all but the last of the minimum size, and add up to `size`, in one pass
   * over the parts; otherwise refuses (an S3 error, the upload left open).
   * S3 itself cannot check the size, so an external store has no such call.
   */
  completeSized?(key: string, uploadId: string, parts: { partNumber: number; etag: string }[], size: number): Promise<void>;
  abortUpload(key: string, uploadId: string): Promise<void>;
  putEmpty(key: string): Promise<void>;
  /** A small object the service writes itself (a Package's metadata files), in one request. */
  putObject(key: string, body: Uint8Array): Promise<void>;
  /** The stored object's size and ETag (quoted, as S3 gives it); null when there is none. */
  objectInfo(key: string): Promise<{ size: number; etag: string } | null>;
  downloadUrl(key: string, filename: string, expiresInSeconds: number): Promise<string>;
  /** The object's bytes, or bytes start..end (inclusive) of it; `signal` stops the read. */
  read(key: string, range?: { start: number; end: number }, signal?: AbortSignal): Promise<Readable>;
  remove(key: string): Promise<void>;
  /** Removes up to 1000 objects in one request (DeleteObjects); a key without an object is no error. */
  removeMany(keys: string[]): Promise<void>;
}

const quote = (etag: string) => (etag.startsWith('"') ? etag : `"${etag}"`);

/** An SDK client of the store; also for the calls about the bucket itself (bucketCors.ts). */
export function createS3Client(s: S3Settings): S3Client {
  return new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: s.pathStyle,
    credentials: { accessKeyId: s.accessKey, secretAccessKey: s.secretKey },
    // The default would sign an empty-body checksum into part URLs, which S3 then rejects.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export function createS3Storage(s: S3Settings, blueprintTtlSeconds: number): Storage {
  const client = createS3Client(s);
  const Bucket = s.bucket;
  let presigner: Promise<Presign> | undefined;
  const presign = async (method: PresignMethod | 'HEAD', key: string, query: Record<string, string>, expiresIn = blueprintTtlSeconds, headers?: Record<string, string>) => {
    presigner ??= createPresigner(client, Bucket, s.region).catch((err: unknown) => {
      presigner = undefined; // the next call tries again
      throw err;
    });
    return (await presigner)(method, key, query, expiresIn, headers);
  };
  // A bound length is signed (X-Amz-SignedHeaders content-length;host) but not listed in the
  // blueprint's headers: every HTTP client sets Content-Length from the body it sends, and
  // some (browsers, fetch over undici's Agent) refuse or choke on one set by hand.
  const blueprint = async (method: PresignMethod, key: string, query: Record<string, string>, length?: number): Promise<Blueprint> => ({
    url: await presign(method, key, query, blueprintTtlSeconds, length === undefined ? undefined : { 'content-length': String(length) }),
    method,
    headers: {},
    body: '',
  });

  const endpoint = new URL(s.endpoint);
  return {
    bucket: Bucket,
    origin: s.pathStyle ? endpoint.origin : `${endpoint.protocol}//${Bucket}.${endpoint.host}`,
    async ensureBucket() {
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
      } catch {
        await client.send(new CreateBucketCommand({ Bucket }));
      }
    },
    async ping(timeoutMs) {
      await client.send(new HeadBucketCommand({ Bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) });
    },
    createUploadBlueprint: (key) => blueprint('POST', key, { uploads: '' }),
    async createUpload(Key) {
      const r = await client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
      if (!r.UploadId) throw new Error(`the store answered no UploadId for ${Key}`);
      return r.UploadId;
    },
    async partBlueprints(key, uploadId, firstPart, count, lengthOf) {
      const out: Blueprint[] = [];
      for (let n = firstPart; n < firstPart + count; n++) out.push(await blueprint('PUT', key, { partNumber: String(n), uploadId }, lengthOf?.(n)));
      return out;
    },
    putBlueprint: (key, length) => blueprint('PUT', key, {}, length),
    async listParts(Key, UploadId) {
      const parts: StoredPart[] = [];
      let marker: string | undefined;
      for (let page = 0; page < 100; page++) { // 100 pages x 1000 parts covers S3's 10,000-part limit
        const r = await client.send(new ListPartsCommand({ Bucket, Key, UploadId, PartNumberMarker: marker }));
        for (const p of r.Parts ?? []) parts.push({ partNumber: p.PartNumber!, etag: p.ETag!, size: p.Size ?? 0 });
        if (!r.IsTruncated) break;
        marker = r.NextPartNumberMarker;
      }
      return parts;
    },
    async uploadExists(Key, UploadId) {
      try {
        await client.send(new ListPartsCommand({ Bucket, Key, UploadId, MaxParts: 1 }));
        return true;
      } catch (err) {
        if (isMissingUpload(err)) return false;
        throw err;
      }
    },
    async completeUpload(Key, UploadId, parts) {
      const Parts: Part[] = parts.map((p) => ({ PartNumber: p.partNumber, ETag: quote(p.etag) }));
      await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts } }));
    },
    async abortUpload(Key, UploadId) {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
    },
    async putEmpty(Key) {
      await client.send(new PutObjectCommand({ Bucket, Key, Body: new Uint8Array(0) }));
    },
    async putObject(Key, Body) {
      await client.send(new PutObjectCommand({ Bucket, Key, Body, ContentLength: Body.length }));
    },
    async objectInfo(Key) {
      // A HEAD signed here and sent over undici: each finalized file of one part asks it,
      // and the SDK's HeadObject cost about a third of the service's CPU a small file
      // against an external store (docs/benchmarks.md, bench:dataset --kill).
      const res = await request(await presign('HEAD', Key, {}, 60), { method: 'HEAD' });
      await res.body.dump();
      if (res.statusCode === 404) return null;
      if (res.statusCode !== 200) {
        // Shaped as the SDK's errors are, for failure.ts and the logs.
        throw Object.assign(new Error(`the store answered ${res.statusCode} to HEAD ${Key}`), { name: 'HeadObjectFailed', $metadata: { httpStatusCode: res.statusCode } });
      }
      return { size: Number(res.headers['content-length'] ?? 0), etag: String(res.headers.etag ?? '') };
    },
    downloadUrl(key, filename, expiresIn) {
      const disposition = `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`;
      return presign('GET', key, { 'response-content-disposition': disposition }, expiresIn);
    },
    async read(Key, range, abortSignal) {
      const Range = range ? `bytes=${range.start}-${range.end}` : undefined;
      const r = await client.send(new GetObjectCommand({ Bucket, Key, Range }), abortSignal ? { abortSignal } : {});
      return r.Body as Readable;
    },
    async remove(Key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key }));
    },
    async removeMany(keys) {
      if (keys.length === 0) return;
      const r = await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
      const failed = (r.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) throw new Error(`the store kept ${failed.length} of ${keys.length} objects: ${failed[0]!.Key}: ${failed[0]!.Code} ${failed[0]!.Message ?? ''}`);
    },
  };
}
