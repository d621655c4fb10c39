// Small HTTP helpers shared by the handlers: answers, stored object headers,
// response-* overrides, Range parsing, conditional requests.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { s3err } from './errors.js';
import type { Manifest } from './disk.js';

export function sendXml(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Length': 0 });
  res.end();
}

/** Headers S3 stores with an object and answers on GET/HEAD. */
const STORED = ['content-type', 'content-disposition', 'content-encoding', 'content-language', 'cache-control', 'expires'];

export function storedHeaders(req: IncomingMessage): { headers: Record<string, string>; meta: Record<string, string> } {
  const headers: Record<string, string> = {};
  const meta: Record<string, string> = {};
  for (const name of STORED) {
    let value = req.headers[name];
    if (typeof value !== 'string') continue;
    if (name === 'content-encoding') {
      // aws-chunked is transport framing, not a property of the object.
      value = value.split(',').map((s) => s.trim()).filter((s) => s && s !== 'aws-chunked').join(',');
      if (!value) continue;
    }
    headers[name] = value;
  }
  headers['content-type'] ??= 'binary/octet-stream';
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith('x-amz-meta-') && typeof value === 'string') meta[name.slice(11)] = value;
  }
  return { headers, meta };
}

const OVERRIDES: Record<string, string> = {
  'response-content-type': 'content-type',
  'response-content-disposition': 'content-disposition',
  'response-content-encoding': 'content-encoding',
  'response-content-language': 'content-language',
  'response-cache-control': 'cache-control',
  'response-expires': 'expires',
};

export const httpDate = (iso: string): string => new Date(iso).toUTCString();

/** GET/HEAD headers of an object, with the pre-signed `response-*` overrides applied. */
export function objectHeaders(m: Manifest, query: Map<string, string>): Record<string, string> {
  const h: Record<string, string> = {
    ...m.headers,
    ETag: m.etag,
    'Last-Modified': httpDate(m.lastModified),
    'Accept-Ranges': 'bytes',
  };
  for (const [param, header] of Object.entries(OVERRIDES)) {
    const v = query.get(param);
    if (v !== undefined) h[header] = v;
  }
  for (const [k, v] of Object.entries(m.meta)) h[`x-amz-meta-${k}`] = v;
  return h;
}

/**
 * `bytes=a-b`, `bytes=a-`, `bytes=-n` -> inclusive [start, end]. Syntactically
 * invalid or multi-range headers are ignored (whole object), as S3 does;
 * unsatisfiable ones throw InvalidRange (416).
 */
export function parseRange(header: string | undefined, size: number): [number, number] | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const unsatisfiable = () => s3err('InvalidRange', undefined, { 'Content-Range': `bytes */${size}` });
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) throw unsatisfiable();
    return [Math.max(0, size - n), size - 1];
  }
  const start = Number(m[1]);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) throw unsatisfiable();
  return [start, m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)];
}

function etagListMatches(list: string, etag: string): boolean {
  const bare = etag.replace(/"/g, '');
  return list.split(',').some((t) => {
    const v = t.trim().replace(/^W\//, '').replace(/"/g, '');
    return v === '*' || v === bare;
  });
}

/** If-Match / If-None-Match / If-(Un)Modified-Since: 'ok', 'not-modified' or throws PreconditionFailed. */
export function checkConditions(req: IncomingMessage, m: Manifest): 'ok' | 'not-modified' {
  const h = req.headers;
  const modified = Math.floor(Date.parse(m.lastModified) / 1000) * 1000;
  if (h['if-match'] !== undefined && !etagListMatches(h['if-match'], m.etag)) throw s3err('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  if (h['if-match'] === undefined && h['if-unmodified-since'] !== undefined && modified > Date.parse(h['if-unmodified-since'])) {
    throw s3err('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
  }
  if (h['if-none-match'] !== undefined) return etagListMatches(h['if-none-match'], m.etag) ? 'not-modified' : 'ok';
  if (h['if-modified-since'] !== undefined && modified <= Date.parse(h['if-modified-since'])) return 'not-modified';
  return 'ok';
}
