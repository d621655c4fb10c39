// Pre-signed URLs (blueprints and downloads) at a cost that suits two or more
// per uploaded file. getSignedUrl resolves the endpoint, clones the client's
// middleware stack and serializes the whole command for every URL (1-2 ms of
// CPU each); here the SDK resolves the bucket's address once, and each URL is
// one S3RequestPresigner signature over a request built on that address.
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl, S3RequestPresigner } from '@aws-sdk/s3-request-presigner';

export type PresignMethod = 'GET' | 'PUT' | 'POST';
export type Presign = (method: PresignMethod, key: string, query: Record<string, string>, expiresIn: number) => Promise<string>;

const PROBE_KEY = 'ferry-presign-probe';

/** RFC 3986 encoding, as S3 expects in paths and query strings. */
const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export async function createPresigner(client: S3Client, bucket: string, region: string): Promise<Presign> {
  // Path style gives /bucket/KEY, virtual-hosted style bucket.host/KEY: whatever comes before the key is kept.
  const probe = new URL(await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: PROBE_KEY }), { expiresIn: 60 }));
  if (!probe.pathname.endsWith(`/${PROBE_KEY}`)) throw new Error(`unexpected pre-signed URL shape for bucket ${bucket}: ${probe.origin}${probe.pathname}`);
  const prefix = probe.pathname.slice(0, -PROBE_KEY.length);
  const presigner = new S3RequestPresigner({ ...client.config, region, signingName: 's3' });
  return async (method, key, query, expiresIn) => {
    const signed = await presigner.presign(
      {
        method,
        protocol: probe.protocol,
        hostname: probe.hostname,
        ...(probe.port ? { port: Number(probe.port) } : {}),
        path: prefix + key.split('/').map(encode).join('/'),
        query: { ...query },
        headers: { host: probe.host },
      },
      { expiresIn },
    );
    const search = Object.entries(signed.query ?? {})
      .map(([k, v]) => `${encode(k)}=${encode(String(v ?? ''))}`)
      .join('&');
    return `${probe.protocol}//${probe.host}${signed.path}?${search}`;
  };
}
