// Ferry's embedded S3-compatible object store: path-style S3 REST over plain
// node:http, files under a data directory, AWS Signature V4 on every request.
// See disk.ts for the layout and why completing a multipart upload copies nothing.

import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { Catalog } from './catalog.js';
import { corsMatcher } from './cors.js';
import { KeyedLock, Layout, removeQuietly } from './disk.js';
import { localStore, type LocalStore } from './local.js';
import { createHandler } from './server.js';
import type { StoreContext } from './store.js';

export { loadOrCreateStoreCredentials, type StoreCredentials } from './credentials.js';
export { S3Error } from './errors.js';
export type { LocalStore, LocalPart } from './local.js';

export interface ObjectStoreOptions {
  host: string;
  port: number;
  dataDir: string;
  accessKey: string;
  secretKey: string;
  /** Region clients must sign for; default 'us-east-1'. */
  region?: string;
  /** Created at start if missing. */
  buckets?: string[];
  /** Browser origins allowed to call the store (cors.ts): exact, or `https://*.domain`. */
  corsOrigins?: string[];
  logger?: Logger;
}

export interface RunningObjectStore {
  /** http://host:port */
  url: string;
  port: number;
  /** The multipart control calls, in-process (for the service that embeds the store). */
  local: LocalStore;
  close(): Promise<void>;
}

export async function startObjectStore(opts: ObjectStoreOptions): Promise<RunningObjectStore> {
  const layout = new Layout(resolve(opts.dataDir));
  await mkdir(layout.root, { recursive: true });
  // Bodies left half-received by a previous run are never visible objects: drop them.
  await removeQuietly(layout.incoming);
  await mkdir(layout.incoming, { recursive: true });
  const catalog = new Catalog(layout, opts.logger);
  await catalog.load();
  for (const bucket of opts.buckets ?? []) await catalog.create(bucket);

  const region = opts.region ?? 'us-east-1';
  const ctx: StoreContext = {
    layout,
    catalog,
    locks: new KeyedLock(),
    region,
    logger: opts.logger,
    background: new Set(),
    uploads: new Map(),
    readers: new Map(),
    doomed: new Set(),
  };
  const server = createServer(
    {
      // Large parts over slow links can take longer than Node's 5-minute default.
      requestTimeout: 0,
      headersTimeout: 60_000,
      keepAliveTimeout: 65_000,
      noDelay: true,
    },
    createHandler(ctx, { accessKey: opts.accessKey, secretKey: opts.secretKey, region }, corsMatcher(opts.corsOrigins ?? [])),
  );
  // A client silent for 5 minutes mid-body or mid-download is gone: free its socket and temp file.
  server.setTimeout(5 * 60_000);
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port, opts.host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  opts.logger?.info({ host: opts.host, port, dataDir: layout.root }, 'objectstore: listening');

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    local: localStore(ctx),
    close() {
      closing ??= new Promise<void>((ok) => {
        server.close(() => ok());
        // Keep-alive and in-flight sockets would otherwise hold close() open.
        server.closeAllConnections();
      }).then(async () => {
        await Promise.allSettled([...ctx.background]);
      });
      return closing;
    },
  };
}
