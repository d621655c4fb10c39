// The request handler: split the path-style URL, verify the signature, route
// to an operation, and answer failures as S3 XML errors. Plain node:http, no
// framework, so bodies stream straight from the socket to disk.

import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleCors } from './cors.js';
import { createBucket, deleteBucket, headBucket, listBuckets, listObjects } from './buckets.js';
import { validBucketName } from './catalog.js';
import { S3Error, s3err } from './errors.js';
import { sendXml } from './http.js';
import { abortUpload, completeUpload, createUpload, listParts, uploadPart } from './multipart.js';
import { deleteObject, deleteObjects, getObject, putObject } from './objects.js';
import { parseQuery, verifySignature, type Credentials } from './sigv4.js';
import type { S3Request, StoreContext } from './store.js';
import { el, escapeXml, S3_NS, xmlDocument } from './xml.js';

/** Sub-resources of the S3 API this store does not offer: answered 501, never misread as a plain GET/PUT. */
const NOT_IMPLEMENTED = new Set([
  'acl', 'accelerate', 'analytics', 'attributes', 'cors', 'encryption', 'intelligent-tiering', 'inventory',
  'legal-hold', 'lifecycle', 'logging', 'metrics', 'notification', 'object-lock', 'ownershipControls', 'policy',
  'policyStatus', 'publicAccessBlock', 'replication', 'requestPayment', 'restore', 'retention', 'select', 'tagging',
  'torrent', 'versioning', 'versions', 'website',
]);

const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED']);

const idPrefix = randomBytes(4).toString('hex').toUpperCase();
let idCounter = 0;

function decodePath(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw s3err('InvalidURI', "Couldn't parse the specified URI.");
  }
}

async function route(ctx: StoreContext, r: S3Request): Promise<void> {
  const method = r.req.method;
  const q = r.query;
  for (const name of q.keys()) if (NOT_IMPLEMENTED.has(name)) throw s3err('NotImplemented');
  if (!r.bucket) {
    if (method === 'GET') return listBuckets(ctx, r);
    throw s3err('MethodNotAllowed');
  }
  if (!r.key) {
    if (q.has('uploads')) throw s3err('NotImplemented', 'ListMultipartUploads is not supported.');
    switch (method) {
      case 'PUT': return createBucket(ctx, r);
      case 'HEAD': return headBucket(ctx, r);
      case 'DELETE': return deleteBucket(ctx, r);
      case 'POST':
        if (q.has('delete')) return deleteObjects(ctx, r);
        break;
      case 'GET':
        if (q.has('location')) {
          ctx.catalog.get(r.bucket);
          const region = ctx.region === 'us-east-1' ? '' : ctx.region;
          return sendXml(r.res, 200, `<?xml version="1.0" encoding="UTF-8"?>\n<LocationConstraint xmlns="${S3_NS}">${escapeXml(region)}</LocationConstraint>`);
        }
        return listObjects(ctx, r);
    }
    throw s3err('MethodNotAllowed');
  }
  const uploadId = q.has('uploadId');
  switch (method) {
    case 'PUT': return uploadId ? uploadPart(ctx, r) : putObject(ctx, r);
    case 'GET': return uploadId ? listParts(ctx, r) : getObject(ctx, r, false);
    case 'HEAD': return getObject(ctx, r, true);
    case 'DELETE': return uploadId ? abortUpload(ctx, r) : deleteObject(ctx, r);
    case 'POST':
      if (q.has('uploads')) return createUpload(ctx, r);
      if (uploadId) return completeUpload(ctx, r);
      break;
  }
  throw s3err('MethodNotAllowed');
}

function answerError(ctx: StoreContext, req: IncomingMessage, res: ServerResponse, err: unknown, resource: string, requestId: string): void {
  if (res.headersSent || res.destroyed) {
    // Mid-body failure: cutting the connection is the only way to tell the client the body is short.
    if (!(err instanceof S3Error) && !CLIENT_GONE.has((err as NodeJS.ErrnoException).code ?? '')) {
      ctx.logger?.warn({ err, resource }, 'objectstore: response aborted');
    }
    res.destroy();
    return;
  }
  if (!(err instanceof S3Error) && CLIENT_GONE.has((err as NodeJS.ErrnoException).code ?? '')) {
    res.destroy();
    return;
  }
  let e: S3Error;
  if (err instanceof S3Error) {
    e = err;
  } else {
    ctx.logger?.error({ err, resource, method: req.method }, 'objectstore: internal error');
    e = s3err('InternalError');
  }
  const body = xmlDocument('Error', [
    el('Code', e.code),
    el('Message', e.message),
    el('Resource', resource),
    el('RequestId', requestId),
  ], false);
  if (req.method === 'HEAD') {
    res.writeHead(e.status, e.headers);
    res.end();
  } else {
    sendXml(res, e.status, body, e.headers);
  }
}

export function createHandler(ctx: StoreContext, creds: Credentials, cors: (origin: string) => boolean): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (handleCors(cors, req, res)) return;
    const requestId = `${idPrefix}${(idCounter++).toString(16).toUpperCase().padStart(8, '0')}`;
    res.setHeader('x-amz-request-id', requestId);
    res.setHeader('Server', 'Ferry');
    const url = req.url ?? '/';
    const qi = url.indexOf('?');
    const rawPath = qi < 0 ? url : url.slice(0, qi);
    let resource = rawPath;
    if (ctx.logger?.isLevelEnabled('debug')) {
      const started = performance.now();
      res.once('close', () => ctx.logger?.debug(
        { method: req.method, url: rawPath, status: res.statusCode, ms: Math.round(performance.now() - started), requestId },
        'objectstore: request',
      ));
    }
    const run = async (): Promise<void> => {
      if (!rawPath.startsWith('/')) throw s3err('InvalidURI', "Couldn't parse the specified URI.");
      const query = parseQuery(qi < 0 ? '' : url.slice(qi + 1));
      const auth = verifySignature(req, rawPath, query, creds);
      const slash = rawPath.indexOf('/', 1);
      const bucket = decodePath(slash < 0 ? rawPath.slice(1) : rawPath.slice(1, slash));
      const key = slash < 0 ? '' : decodePath(rawPath.slice(slash + 1));
      resource = bucket ? `/${bucket}${key ? '/' + key : ''}` : '/';
      if (bucket && !validBucketName(bucket)) throw s3err('InvalidBucketName', 'The specified bucket is not valid.');
      if (Buffer.byteLength(key, 'utf8') > 1024) throw s3err('KeyTooLongError', 'Your key is too long');
      await route(ctx, { req, res, bucket, key, query: new Map(query), auth });
    };
    run().catch((err: unknown) => answerError(ctx, req, res, err, resource, requestId));
  };
}
