// The customer's bucket of an S3 or S3-compatible connection, as an
// @aws-sdk/client-s3 client: where it is (endpoint, region, addressing style),
// with which key, and how failures read in a transfer record. A tenant's
// endpoint (and AWS's, whose host name the tenant's bucket and region make) is
// reached through the outbound guard; the operator's --cloud-aws-endpoint is not.
import { S3Client } from '@aws-sdk/client-s3';
import type { HostedContext } from '../context.js';
import { describeNetworkError } from '../net/outboundErrors.js';
import type { StorageClass } from '../../api/hosted/cloudProviders.js';
import type { Authorization } from '../services/cloudAuthorization.js';

export interface S3Target {
  client: S3Client;
  bucket: string;
  /** Sent with every object of an amazon_s3 connection. */
  storageClass?: StorageClass;
}

const QUIET = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** The region to sign for: "default" is the provider's own default. */
export function signingRegion(provider: string, region: string): string {
  if (region !== 'default') return region;
  return provider === 'cloudflare_r2_s3' ? 'auto' : 'us-east-1';
}

/**
 * A client for the connection's bucket. One attempt per call (maxAttempts 1): a
 * part's body is a stream that cannot be sent twice, and the jobs table retries
 * the transfer, resuming where it stopped.
 */
export function s3TargetOf(ctx: Pick<HostedContext, 'config' | 'outbound'>, provider: string, auth: Authorization): S3Target {
  const aws = auth.storage_class !== undefined;
  const endpoint = aws ? ctx.config.cloudAwsEndpoint : str(auth.endpoint);
  const timeouts = { connectionTimeout: 15_000, requestTimeout: 5 * 60_000 };
  const operatorChosen = aws && endpoint !== undefined;
  const client = new S3Client({
    region: signingRegion(provider, str(auth.region)),
    ...(endpoint ? { endpoint } : {}),
    // S3-compatible stores mostly want /bucket/key; "false" asks for bucket.host/key. AWS: virtual-hosted.
    forcePathStyle: aws ? !!endpoint : str(auth.force_s3_path_style) !== 'false',
    credentials: { accessKeyId: str(auth.client_id), secretAccessKey: str(auth.client_secret) },
    maxAttempts: 1,
    // Checksums only where S3 requires them: a streamed part is not read twice to compute one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Agents of the client's own (destroyed with it): the guard's lookup, or the SDK's defaults for the operator's endpoint.
    requestHandler: operatorChosen ? timeouts : { ...timeouts, ...ctx.outbound.agents() },
    // The SDK would print to the console when a streamed request fails; the transfer records the failure instead.
    logger: QUIET,
  });
  return { client, bucket: str(auth.destination), ...(aws ? { storageClass: auth.storage_class as StorageClass } : {}) };
}

/** What an S3 call failed with, in a line: the store's code and status, or the network error in the guard's words (no address or port). */
export function describeS3Error(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; Code?: string; $metadata?: { httpStatusCode?: number }; cause?: { code?: string } } | undefined;
  const status = e?.$metadata?.httpStatusCode;
  const code = e?.Code ?? e?.code ?? e?.cause?.code ?? e?.name;
  const msg = (e?.message ?? String(err)).slice(0, 300);
  if (status) return `the bucket's store answered ${status} ${code ?? ''}: ${msg}`.replace(/ +:/, ':');
  const net = describeNetworkError(err);
  if (net) return net;
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

/** The store's status of a failed call; undefined for network errors. */
export const statusOf = (err: unknown) => (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
export const codeOf = (err: unknown) => {
  const e = err as { Code?: string; name?: string } | undefined;
  return e?.Code ?? e?.name;
};
