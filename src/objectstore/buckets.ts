// Bucket operations: CreateBucket, HeadBucket, DeleteBucket, ListBuckets,
// ListObjects (V2 and the older V1 form some tools still send).

import { s3err } from './errors.js';
import { sendEmpty, sendXml } from './http.js';
import { listPage, type ListPage } from './listing.js';
import { awsUriEncode } from '../sigv4/sign.js';
import type { S3Request, StoreContext } from './store.js';
import { el, xmlDocument, type XmlChild } from './xml.js';

const OWNER = el('Owner', [el('ID', 'ferry'), el('DisplayName', 'ferry')]);

export async function createBucket(ctx: StoreContext, r: S3Request): Promise<void> {
  await ctx.catalog.create(r.bucket);
  sendEmpty(r.res, 200, { Location: `/${r.bucket}` });
}

export function headBucket(ctx: StoreContext, r: S3Request): void {
  ctx.catalog.get(r.bucket);
  sendEmpty(r.res, 200, { 'x-amz-bucket-region': ctx.region });
}

export async function deleteBucket(ctx: StoreContext, r: S3Request): Promise<void> {
  await ctx.catalog.remove(r.bucket);
  sendEmpty(r.res, 204);
}

export function listBuckets(ctx: StoreContext, r: S3Request): void {
  const buckets = ctx.catalog.names().map((name) =>
    el('Bucket', [el('Name', name), el('CreationDate', ctx.catalog.get(name).created)]));
  sendXml(r.res, 200, xmlDocument('ListAllMyBucketsResult', [OWNER, el('Buckets', buckets)]));
}

function maxKeys(q: Map<string, string>): number {
  const raw = q.get('max-keys');
  if (raw === undefined) return 1000;
  if (!/^\d+$/.test(raw)) throw s3err('InvalidArgument', 'Provided max-keys not an integer or within integer range');
  return Math.min(Number(raw), 1000);
}

const encodeToken = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

function decodeToken(token: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw s3err('InvalidArgument', 'The continuation token provided is incorrect');
  return Buffer.from(token, 'base64url').toString('utf8');
}

function pageXml(page: ListPage, encode: (s: string) => string): XmlChild[] {
  return [
    ...page.contents.map(([key, e]) => el('Contents', [
      el('Key', encode(key)),
      el('LastModified', e.lastModified),
      el('ETag', e.etag),
      el('Size', e.size),
      el('StorageClass', 'STANDARD'),
    ])),
    ...page.prefixes.map((p) => el('CommonPrefixes', [el('Prefix', encode(p))])),
  ];
}

export function listObjects(ctx: StoreContext, r: S3Request): void {
  const index = ctx.catalog.get(r.bucket);
  const q = r.query;
  const v2 = q.get('list-type') === '2';
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') ?? '';
  const max = maxKeys(q);
  const encodingType = q.get('encoding-type');
  if (encodingType !== undefined && encodingType !== 'url') throw s3err('InvalidArgument', 'Invalid Encoding Method specified in Request');
  const encode = encodingType === 'url' ? (s: string) => s.split('/').map(awsUriEncode).join('/') : (s: string) => s;
  const token = v2 ? q.get('continuation-token') : undefined;
  const startAfter = v2 ? q.get('start-after') : q.get('marker');
  const after = token !== undefined ? decodeToken(token) : startAfter || undefined;
  const page = listPage(index, { prefix, delimiter, maxKeys: max, after });
  const common: XmlChild[] = [
    el('Name', r.bucket),
    el('Prefix', encode(prefix)),
    delimiter ? el('Delimiter', encode(delimiter)) : undefined,
    el('MaxKeys', max),
    el('IsTruncated', page.truncated),
    encodingType ? el('EncodingType', encodingType) : undefined,
  ];
  const body = v2
    ? [
        ...common,
        el('KeyCount', page.contents.length + page.prefixes.length),
        token !== undefined ? el('ContinuationToken', token) : undefined,
        page.truncated && page.last !== undefined ? el('NextContinuationToken', encodeToken(page.last)) : undefined,
        startAfter !== undefined ? el('StartAfter', encode(startAfter)) : undefined,
      ]
    : [
        ...common,
        el('Marker', encode(startAfter ?? '')),
        page.truncated && page.last !== undefined ? el('NextMarker', encode(page.last)) : undefined,
      ];
  sendXml(r.res, 200, xmlDocument('ListBucketResult', [...body, ...pageXml(page, encode)]));
}
