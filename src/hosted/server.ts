// Starts the whole hosted service: database, signing key, object storage
// (embedded unless an external S3 store is configured), HTTP app, sweeper and
// the jobs worker, as the instance's role says (api: HTTP only; worker: the
// background work, and /healthz and /readyz; all: both). close() shuts down
// gracefully: see docs/hosted-api-notes/instances.md.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pino, { type Logger } from 'pino';
import type { HostedConfig } from './config.js';
import type { HostedContext } from './context.js';
import { openConfiguredDatabase } from './db/open.js';
import { HeldElsewhereError, holdLockFile } from '../sqlite/exclusive.js';
import { createTokens } from './auth/tokens.js';
import { createSealer, loadOrCreateSealingKey } from './auth/sealed.js';
import { createS3Storage, type S3Settings } from './storage/s3.js';
import { withEmbeddedStore } from './storage/embedded.js';
import { createMailer } from './mail/mailer.js';
import { buildApp } from './app.js';
import { startSweeper } from './jobs/sweeper.js';
import { createJobSignal, startJobWorker } from './jobs/worker.js';
import { jobHandlers } from './jobs/handlers.js';
import { createGatewayHub, detachAll } from './gateway/hub.js';
import { ensureInitOwner } from './services/accounts.js';
import { loadKey } from './auth/keys.js';
import { loadOrCreateStoreCredentials, type RunningObjectStore } from '../objectstore/index.js';
import { startObjectStoreThread } from '../objectstore/thread.js';
import { boundHeapGrowth } from '../threads/heapGrowth.js';
import { inProcessNotifier } from './events/notifier.js';
import { postgresNotifier } from './events/pgNotifier.js';
import { partProgress, type PartProgress } from './events/partProgress.js';
import { OutboundGuard } from './net/outbound.js';

export interface RunningHosted {
  url: string;
  s3Url: string;
  ctx: HostedContext;
  /**
   * Stops accepting at once (/readyz answers 503 shutting_down), lets requests
   * and jobs in flight finish for up to `graceMs` (0 when omitted: cut at once),
   * hands back the jobs still running, then closes the store and the database.
   */
  close(opts?: { graceMs?: number }): Promise<void>;
}

/** The JWT signing key: generated once, kept in the data dir. */
async function loadOrCreateSigningKey(dataDir: string): Promise<Uint8Array> {
  const file = path.join(dataDir, 'signing.key');
  try {
    return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  } catch {
    const key = randomBytes(32);
    await fs.writeFile(file, key.toString('base64'), { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  }
}

/**
 * One service per data dir with the embedded store: two would run two stores
 * over one objects folder. (With an external store instances may share one.) A lock file, not the database, because
 * `ferry admin` opens the database while the service runs.
 */
function holdDataDir(dataDir: string): { release(): void } {
  try {
    return holdLockFile(path.join(dataDir, 'serve.lock'));
  } catch (err) {
    if (!(err instanceof HeldElsewhereError)) throw err;
    throw new Error(`another ferry service is using ${dataDir} (its serve.lock is held); stop it, or give this one another --data-dir`);
  }
}

export async function startHostedService(config: HostedConfig, log: Logger = pino({ level: config.logLevel })): Promise<RunningHosted> {
  await fs.mkdir(config.dataDir, { recursive: true });
  boundHeapGrowth();
  const embedded = !config.s3;
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  if (embedded) cleanups.push(holdDataDir(config.dataDir).release);
  const instance = { role: config.role, shuttingDown: false };
  const servesApi = config.role !== 'worker';
  const sweeps = config.role !== 'api';
  // What close() stops first, together, within the grace; then the cleanups run.
  let stopHttp: ((graceMs: number) => Promise<void>) | undefined;
  let stopWork: ((graceMs: number) => Promise<void>) | undefined;
  let closing: Promise<void> | undefined;
  const close = (opts: { graceMs?: number } = {}) =>
    (closing ??= (async () => {
      instance.shuttingDown = true;
      const graceMs = opts.graceMs ?? 0;
      await Promise.all([stopHttp?.(graceMs), stopWork?.(graceMs)]);
      for (const c of cleanups.reverse()) await c();
    })());
  try {
    const { db, close: closeDb } = await openConfiguredDatabase({
      database: config.database,
      sqliteFile: path.join(config.dataDir, 'ferry.db'),
      onIdleError: (err) => log.warn({ err }, 'an idle database connection failed; the pool opens another'),
    });
    cleanups.push(closeDb);
    let store: RunningObjectStore | undefined;
    let s3: S3Settings;
    // Parts the embedded store reports before the context exists are of no Package yet.
    let progress: PartProgress | undefined;
    if (config.s3) {
      s3 = config.s3;
    } else {
      const creds = await loadOrCreateStoreCredentials(config.dataDir);
      store = await startObjectStoreThread({
        ...config.s3Listen,
        dataDir: path.join(config.dataDir, 'objects'),
        ...creds,
        buckets: [config.bucket],
        corsOrigins: config.corsOrigins,
        logLevel: log.level,
        onPartStored: (p) => progress?.stored(p),
      });
      cleanups.push(() => store!.close());
      s3 = { endpoint: store.url, region: 'us-east-1', bucket: config.bucket, pathStyle: true, ...creds };
    }
    const s3Storage = createS3Storage(s3, config.blueprintTtlSeconds);
    const storage = store ? withEmbeddedStore(s3Storage, store.local) : s3Storage;
    await storage.ensureBucket();
    const mailer = createMailer(config.smtp, path.join(config.dataDir, 'outbox'));
    cleanups.push(() => mailer.close());
    const tokens = createTokens(await loadKey(config.signingKey, 'signing key', () => loadOrCreateSigningKey(config.dataDir)), config.userTokenTtlSeconds, undefined, config.uploadTokenTtlSeconds);
    const sealer = createSealer(await loadKey(config.sealingKey, 'sealing key', () => loadOrCreateSealingKey(config.dataDir)));
    const ctx = { config, db, tokens, storage, mailer, log, jobs: createJobSignal(), sealer, events: config.database ? await postgresNotifier(config.database, log) : inProcessNotifier(), instance, outbound: new OutboundGuard(config.allowPrivateTargets) } as HostedContext;
    // Its LISTEN connection, when startup fails after this; stopHttp closes it first otherwise.
    cleanups.push(() => ctx.events.close());
    if (store) {
      const p = (progress = partProgress(ctx));
      // Before the store stops and the database closes (cleanups run in reverse).
      cleanups.push(() => p.stop());
    }
    ctx.gateways = createGatewayHub(ctx);
    // No gateway socket outlives the process that held it; only the embedded store's single instance knows none is held elsewhere.
    if (embedded) await detachAll(ctx);
    if (config.initOwner && (await ensureInitOwner(db, config.initOwner.email, config.initOwner.password))) {
      log.info({ email: config.initOwner.email }, 'created the first owner and their team');
    }
    const app = await buildApp(ctx);
    await app.listen({ host: config.host, port: config.port });
    stopHttp = async (graceMs) => {
      // Open event streams and gateway sockets end first (politely): they would hold the close up.
      ctx.events.close();
      const gateways = ctx.gateways.close();
      // Stops listening at once; resolves when the requests in flight have been answered.
      const closed = app.close();
      const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
      await Promise.all([closed, gateways]);
      clearTimeout(cut);
    };
    // Every role runs jobs: an api instance only its storage gateways' transfers (jobs/handlers.ts).
    const sweeper = sweeps ? startSweeper(ctx, config.sweepIntervalMs, { alone: embedded }) : undefined;
    const jobs = jobHandlers(ctx, config.role);
    const worker = startJobWorker(db, log, jobs.handlers, { pollMs: config.jobsPollMs, leaseMs: config.jobsLeaseMs, concurrency: config.jobsConcurrency });
    ctx.jobs.listen(worker.wake);
    stopWork = async (graceMs) => {
      await Promise.all([sweeper?.stop(), worker.stop(graceMs)]);
      // After the worker: its jobs in flight use what the handlers hold (the webhook client).
      await jobs.close();
    };
    if (!servesApi) log.info('role worker: serving /healthz and /readyz only');
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    // With an ephemeral port the configured public URL cannot have known it.
    if (config.port === 0) {
      config.publicUrl = `http://${host}:${port}`;
      config.linkUrl = `${config.publicUrl}/l`;
    }
    return { url: `http://${host}:${port}`, s3Url: s3.endpoint, ctx, close };
  } catch (err) {
    await close();
    throw err;
  }
}
