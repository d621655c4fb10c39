// Pre-signed URLs (blueprints and downloads) at a cost that suits two or more
// per uploaded file. The SDK resolves the bucket's address once (path or
// virtual-hosted style, the endpoint); each URL is then signed here
// (src/sigv4/sign.ts), some 10 µs where the SDK's presigner takes ~100 µs.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { awsUriEncode, presignedQuery } from '../../sigv4/sign.js';

export type PresignMethod = 'GET' | 'PUT' | 'POST';
/** `headers`: what the request must carry besides host, signed (lower-case names), e.g. its content-length. */
/** HEAD too: the service's own size checks (s3.ts objectInfo), never a blueprint. */
export type Presign = (method: PresignMethod | 'HEAD', key: string, query: Record<string, string>, expiresIn: number, headers?: Record<string, string>) => Promise<string>;

const PROBE_KEY = 'ferry-presign-probe';

export async function createPresigner(client: S3Client, bucket: string, region: string, now: () => Date = () => new Date()): Promise<Presign> {
  // Path style gives /bucket/KEY, virtual-hosted style bucket.host/KEY: whatever comes before the key is kept.
  const probe = new URL(await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: PROBE_KEY }), { expiresIn: 60 }));
  if (!probe.pathname.endsWith(`/${PROBE_KEY}`)) throw new Error(`unexpected pre-signed URL shape for bucket ${bucket}: ${probe.origin}${probe.pathname}`);
  const prefix = probe.pathname.slice(0, -PROBE_KEY.length);
  return async (method, key, query, expiresIn, headers) => {
    // Asked each time: a provider may rotate its keys (static ones answer at once).
    const creds = await client.config.credentials();
    const path = prefix + key.split('/').map(awsUriEncode).join('/');
    const search = presignedQuery({
      method,
      host: probe.host,
      path,
      query,
      ...(headers ? { headers } : {}),
      accessKey: creds.accessKeyId,
      secretKey: creds.secretAccessKey,
      ...(creds.sessionToken ? { sessionToken: creds.sessionToken } : {}),
      region,
      expiresIn,
      now: now(),
    });
    return `${probe.protocol}//${probe.host}${path}?${search}`;
  };
}
