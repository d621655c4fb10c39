// The hosted service's settings, from flags and FERRY_* environment variables
// (flags win). Kept free of I/O so it can be unit-tested.
import os from 'node:os';
import path from 'node:path';
import { parsePrivateTargets, type PrivateTargets } from './net/addresses.js';

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  pass?: string;
  from: string;
  /** --smtp-ca-file: the relay's certificate is checked against this CA (PEM) instead of the system's. */
  ca?: string;
  /** --smtp-tls-insecure: any certificate is taken (a local relay with a self-signed one); off by default. */
  tlsInsecure: boolean;
}

export interface ExternalS3 {
  endpoint: string;
  bucket: string;
  region: string;
  accessKey: string;
  secretKey: string;
  pathStyle: boolean;
}

export interface HostedConfig {
  host: string;
  port: number;
  dataDir: string;
  /** --database / FERRY_DATABASE_URL: a postgres:// URL; SQLite's ferry.db in the data dir when absent. */
  database?: string;
  publicUrl: string;
  linkUrl: string;
  /** Portal pages also answer at `{subdomain}.{portalDomain}` (--portal-domain). */
  portalDomain?: string;
  /** Browser origins the embedded store answers CORS for, beyond the public URL's (and the Portal domain's). */
  corsOrigins: string[];
  initOwner?: { email: string; password: string };
  smtp?: SmtpSettings;
  /** Where the embedded store listens; ignored when `s3` points at an external store. */
  s3Listen: { host: string; port: number };
  s3?: ExternalS3;
  bucket: string;
  blueprintTtlSeconds: number;
  /** How long a user token (POST /v1/auth, /v1/auth/refresh) is valid. */
  userTokenTtlSeconds: number;
  /**
   * --max-session-days / FERRY_MAX_SESSION_DAYS (default 30): how long after a sign-in with
   * the password its tokens may still be renewed (POST /v1/auth/refresh); then the client
   * signs in again. A session so ends at most one --user-token-ttl after it.
   */
  maxSessionSeconds: number;
  /**
   * --upload-token-ttl-hours / FERRY_UPLOAD_TOKEN_TTL_HOURS (168): how long the token of an
   * anonymous Portal uploader lives (it also ends when its Portal is deactivated, expires or is deleted).
   */
  uploadTokenTtlSeconds: number;
  /**
   * --unfinished-package-ttl-hours / FERRY_UNFINISHED_PACKAGE_TTL_HOURS (168; 0: never): a Package
   * still new with no activity (its own change, a file registered, finalized or given blueprints)
   * for this long is expired by the sweeper, its open uploads aborted and its objects deleted.
   */
  unfinishedPackageTtlMs: number;
  sweepIntervalMs: number;
  /** Webhook retries wait this long after the first failed attempt, doubling after each. */
  webhookRetryBaseMs: number;
  /** How long a webhook receiver has to answer one attempt. */
  webhookTimeoutMs: number;
  /** The jobs worker looks for due jobs at least this often (other processes' jobs, run-out leases). */
  jobsPollMs: number;
  /** A claimed job is taken over by another worker when its lease is not renewed for this long. */
  jobsLeaseMs: number;
  /** Jobs one process runs at once. */
  jobsConcurrency: number;
  /** Cloud transfers: objects larger than this go in parts of this size. */
  cloudPartSize: number;
  /** Parts of one object copied at once. */
  cloudPartConcurrency: number;
  /** Rows a cloud transfer reads at a time: its Package's files when it plans, its items when it sends. */
  cloudPageSize: number;
  /** Attempts of one cloud transfer (each resumes where the last stopped). */
  cloudAttempts: number;
  /** The wait after a transfer's first failed attempt; each later wait doubles. */
  cloudRetryBaseMs: number;
  /** Where amazon_s3 connections are sent instead of AWS (an S3 mirror, or tests); AWS when absent. */
  cloudAwsEndpoint?: string;
  /**
   * --allow-private-targets / FERRY_ALLOW_PRIVATE_TARGETS: which non-public addresses
   * webhooks and cloud connections (tenant-chosen targets) may reach. Off by default:
   * only public ones. `true`: all but cloud metadata services; or comma-separated
   * CIDRs (10.0.0.0/8,127.0.0.1/32), which may name a metadata address too (net/addresses.ts).
   */
  allowPrivateTargets: PrivateTargets;
  /** An event stream sends a comment line this often, and looks for events another instance raised while its notice was lost. */
  eventsHeartbeatMs: number;
  /** Event streams one credential (a user, an API key, a package token) may hold open at once, per instance. */
  eventsMaxStreams: number;
  /** The service sends each storage gateway a frame at least this often, and drops one that does not answer a ping within two. */
  gatewayHeartbeatMs: number;
  /** A transfer waiting for its storage gateway to connect looks again this often (a gateway that connects wakes it at once). */
  gatewayRecheckMs: number;
  /** A transfer whose storage gateway stays away this long after the transfer was raised is given up. */
  gatewayWaitMs: number;
  /** clamd to scan every finalized file with (INSTREAM); no scanning when absent. */
  clamd?: ClamdAddress;
  /** How long clamd may stay silent during one scan (it is, while it scans a large file) before the attempt fails. */
  clamdTimeoutMs: number;
  /** Attempts of one scan (clamd unreachable or answering ERROR) before the file is marked scan failed. */
  clamdAttempts: number;
  /** The wait after a scan's first failed attempt; each later wait doubles (at most 10 minutes). */
  clamdRetryBaseMs: number;
  /** The desktop app's update feed served at /updates/ (latest*.yml, installers, blockmaps), when given. */
  updatesDir?: string;
  /** Requests per window and class (0: no limit); see docs/hosted-api-notes/rate-limits.md. */
  rateLimits: RateLimits;
  /**
   * Wrong Link passwords and Portal access codes, per (Link or Portal, address), and wrong
   * account passwords (sign-in, password change), per account from every address (--lockout-*).
   */
  lockout: LockoutSettings;
  /** Fastify's trustProxy: false (the socket's address), true, or the proxies' addresses. */
  trustProxy: boolean | string;
  logLevel: string;
  /** What this instance runs: the HTTP API, the background work (jobs, sweeps), or both (docs/hosted-api-notes/instances.md). */
  role: InstanceRole;
  /** On SIGTERM/SIGINT: how long requests and jobs in flight may take to finish before they are cut and handed back. */
  shutdownGraceMs: number;
  /** The token signing key and the sealing key when given (base64 in FERRY_SIGNING_KEY / FERRY_SEALING_KEY, or a file); else files in the data dir. */
  signingKey?: KeySource;
  sealingKey?: KeySource;
}

export type InstanceRole = 'api' | 'worker' | 'all';

/** A 32-byte key given outright (base64) or as a file holding it in base64. */
export type KeySource = { base64: string } | { file: string };

export interface RateLimits {
  windowMs: number;
  /** POST /v1/auth, per address. */
  signIn: number;
  /** Requests without a valid credential (Links, the /l/ page, access codes, subdomains), per address. */
  public: number;
  /** X-API-KEY or X-User-Token, per key or user. */
  api: number;
  /** X-Package-Token, per Package. */
  package: number;
}

export interface LockoutSettings {
  /** Wrong attempts that cost nothing; each one after these makes the next wait. */
  freeFailures: number;
  /** The first wait; each further wrong attempt doubles it. */
  delayMs: number;
  /** Wrong attempts after which the pair (or the account) is locked. */
  lockAfter: number;
  lockMs: number;
  /** Wrong attempts are forgotten this long after the last one. */
  forgetMs: number;
}

/** A clamd socket: a Unix socket path, or HOST:PORT for TCP. */
export type ClamdAddress = { path: string } | { host: string; port: number };

/** `--clamd SOCKET|HOST:PORT`: a value with a slash (or no colon) is a Unix socket path. */
export function parseClamd(value: string): ClamdAddress {
  if (value.includes('/') || !value.includes(':')) return { path: path.resolve(value) };
  return parseHostPort(value, '--clamd');
}

export type Flags = Record<string, string | boolean | undefined>;

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'ferry', 'hosted');
}

export function parseHostPort(value: string, what: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new Error(`${what} must be HOST:PORT, got "${value}"`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

function flagOrEnv(flags: Flags, env: NodeJS.ProcessEnv, flag: string): string | undefined {
  const v = flags[flag];
  if (typeof v === 'string') return v;
  if (v === true) return 'true';
  const e = env[`FERRY_${flag.replace(/-/g, '_').toUpperCase()}`];
  return e === undefined || e === '' ? undefined : e;
}

function intSetting(v: string | undefined, fallback: number, what: string, min = 0): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${what} must be an integer >= ${min}, got "${v}"`);
  return n;
}

/** A number of hours, fractions allowed (0.5 is half an hour); above 0, or 0 too when `zero` is allowed. */
function hoursSetting(v: string | undefined, fallback: number, what: string, zero: boolean): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || (n === 0 && !zero)) throw new Error(`${what} must be a number of hours ${zero ? '>= 0' : '> 0'}, got "${v}"`);
  return n;
}

const truthy = (v: string | undefined) => v !== undefined && /^(1|true|yes|on)$/i.test(v);

/**
 * Who may upload to the embedded store from a browser: the service's own pages
 * (the public URL's origin, and every Portal subdomain's with --portal-domain)
 * and the comma-separated --cors-origin list (exact origins or `https://*.domain`).
 */
function storeCorsOrigins(publicUrl: string, portalDomain: string | undefined, extra: string | undefined): string[] {
  const own = new URL(publicUrl);
  // Port 0: the port is chosen at listen, after the store has started; any port of this host then.
  const out = [own.port === '0' ? `${own.protocol}//${own.hostname}:*` : own.origin];
  if (portalDomain) out.push(`${own.protocol}//*.${portalDomain}`);
  for (const o of (extra ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    if (!/^https?:\/\/(\*\.)?[^/*\s]+$/i.test(o)) throw new Error(`--cors-origin takes origins like https://app.example.com or https://*.example.com, got "${o}"`);
    out.push(o.replace(/\/+$/, ''));
  }
  return out;
}

export function resolveHostedConfig(flags: Flags, env: NodeJS.ProcessEnv = process.env): HostedConfig {
  const get = (f: string) => flagOrEnv(flags, env, f);
  const listen = parseHostPort(get('listen') ?? '127.0.0.1:7400', '--listen');
  const dataDir = path.resolve(get('data-dir') ?? defaultDataDir(env));
  const publicUrl = (get('public-url') ?? `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`).replace(/\/+$/, '');
  const portalDomain = get('portal-domain')?.toLowerCase().replace(/^\.+|\.+$/g, '');
  if (portalDomain !== undefined && !/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(portalDomain)) throw new Error(`--portal-domain must be a domain name, got "${portalDomain}"`);
  const initOwnerRaw = get('init-owner');
  let initOwner: HostedConfig['initOwner'];
  if (initOwnerRaw) {
    const i = initOwnerRaw.indexOf(':');
    if (i <= 0 || i === initOwnerRaw.length - 1) throw new Error('--init-owner must be EMAIL:PASSWORD');
    initOwner = { email: initOwnerRaw.slice(0, i), password: initOwnerRaw.slice(i + 1) };
  }
  const smtpHost = get('smtp-host');
  const smtp: SmtpSettings | undefined = smtpHost
    ? {
        host: smtpHost,
        port: intSetting(get('smtp-port'), 587, '--smtp-port', 1),
        secure: truthy(get('smtp-secure')),
        user: get('smtp-user'),
        pass: get('smtp-pass'),
        from: get('smtp-from') ?? 'Ferry <no-reply@ferry.local>',
        ...(get('smtp-ca-file') ? { ca: path.resolve(get('smtp-ca-file')!) } : {}),
        tlsInsecure: truthy(get('smtp-tls-insecure')),
      }
    : undefined;
  const s3Endpoint = get('s3-endpoint');
  const bucket = get('s3-bucket') ?? 'ferry';
  let s3: ExternalS3 | undefined;
  if (s3Endpoint) {
    const accessKey = get('s3-access-key'), secretKey = get('s3-secret-key');
    if (!accessKey || !secretKey) throw new Error('--s3-endpoint needs --s3-access-key and --s3-secret-key');
    s3 = {
      endpoint: s3Endpoint.replace(/\/+$/, ''),
      bucket,
      region: get('s3-region') ?? 'us-east-1',
      accessKey,
      secretKey,
      pathStyle: get('s3-path-style') === undefined ? true : truthy(get('s3-path-style')),
    };
  }
  const s3ListenRaw = get('s3-listen');
  const database = databaseSetting(get('database') ?? (env.FERRY_DATABASE_URL || undefined));
  return {
    ...listen,
    dataDir,
    ...(database ? { database } : {}),
    publicUrl,
    portalDomain,
    corsOrigins: storeCorsOrigins(publicUrl, portalDomain, get('cors-origin')),
    linkUrl: (get('link-url') ?? `${publicUrl}/l`).replace(/\/+$/, ''),
    initOwner,
    smtp,
    s3Listen: s3ListenRaw ? parseHostPort(s3ListenRaw, '--s3-listen') : { host: listen.host, port: listen.port === 0 ? 0 : listen.port + 1 },
    s3,
    bucket,
    blueprintTtlSeconds: intSetting(get('blueprint-ttl'), 3600, '--blueprint-ttl', 1),
    userTokenTtlSeconds: intSetting(get('user-token-ttl'), 12 * 3600, '--user-token-ttl', 2),
    maxSessionSeconds: intSetting(get('max-session-days'), 30, '--max-session-days', 1) * 24 * 3600,
    uploadTokenTtlSeconds: Math.max(1, Math.round(hoursSetting(get('upload-token-ttl-hours'), 168, '--upload-token-ttl-hours', false) * 3600)),
    unfinishedPackageTtlMs: Math.round(hoursSetting(get('unfinished-package-ttl-hours'), 168, '--unfinished-package-ttl-hours', true) * 3600_000),
    sweepIntervalMs: intSetting(get('sweep-interval-ms'), 60_000, '--sweep-interval-ms', 10),
    webhookRetryBaseMs: intSetting(get('webhook-retry-base-ms'), 10_000, '--webhook-retry-base-ms', 1),
    webhookTimeoutMs: intSetting(get('webhook-timeout-ms'), 10_000, '--webhook-timeout-ms', 100),
    jobsPollMs: intSetting(get('jobs-poll-ms'), 1000, '--jobs-poll-ms', 10),
    jobsLeaseMs: intSetting(get('jobs-lease-ms'), 60_000, '--jobs-lease-ms', 100),
    jobsConcurrency: intSetting(get('jobs-concurrency'), 4, '--jobs-concurrency', 1),
    cloudPartSize: intSetting(get('cloud-part-size'), 64 * 1024 * 1024, '--cloud-part-size', 5 * 1024 * 1024),
    cloudPartConcurrency: intSetting(get('cloud-part-concurrency'), 4, '--cloud-part-concurrency', 1),
    cloudPageSize: intSetting(get('cloud-page-size'), 1000, '--cloud-page-size', 1),
    cloudAttempts: intSetting(get('cloud-attempts'), 5, '--cloud-attempts', 1),
    cloudRetryBaseMs: intSetting(get('cloud-retry-base-ms'), 30_000, '--cloud-retry-base-ms', 1),
    gatewayHeartbeatMs: intSetting(get('gateway-heartbeat-ms'), 20_000, '--gateway-heartbeat-ms', 50),
    eventsHeartbeatMs: intSetting(get('events-heartbeat-ms'), 15_000, '--events-heartbeat-ms', 50),
    eventsMaxStreams: intSetting(get('events-max-streams'), 20, '--events-max-streams', 1),
    gatewayRecheckMs: intSetting(get('gateway-recheck-ms'), 60_000, '--gateway-recheck-ms', 10),
    gatewayWaitMs: intSetting(get('gateway-wait-ms'), 7 * 24 * 3600 * 1000, '--gateway-wait-ms', 1000),
    ...(get('cloud-aws-endpoint') ? { cloudAwsEndpoint: get('cloud-aws-endpoint')!.replace(/\/+$/, '') } : {}),
    allowPrivateTargets: parsePrivateTargets(get('allow-private-targets')),
    ...(get('clamd') ? { clamd: parseClamd(get('clamd')!) } : {}),
    clamdTimeoutMs: intSetting(get('clamd-timeout-ms'), 300_000, '--clamd-timeout-ms', 100),
    clamdAttempts: intSetting(get('clamd-attempts'), 8, '--clamd-attempts', 1),
    clamdRetryBaseMs: intSetting(get('clamd-retry-base-ms'), 30_000, '--clamd-retry-base-ms', 1),
    ...(get('updates-dir') ? { updatesDir: path.resolve(get('updates-dir')!) } : {}),
    rateLimits: {
      windowMs: intSetting(get('rate-limit-window-ms'), 60_000, '--rate-limit-window-ms', 100),
      signIn: intSetting(get('rate-limit-sign-in'), 10, '--rate-limit-sign-in'),
      public: intSetting(get('rate-limit-public'), 60, '--rate-limit-public'),
      api: intSetting(get('rate-limit-api'), 600, '--rate-limit-api'),
      package: intSetting(get('rate-limit-package'), 6000, '--rate-limit-package'),
    },
    lockout: {
      freeFailures: intSetting(get('lockout-free'), 3, '--lockout-free'),
      delayMs: intSetting(get('lockout-delay-ms'), 1000, '--lockout-delay-ms', 1),
      lockAfter: intSetting(get('lockout-after'), 10, '--lockout-after', 1),
      lockMs: intSetting(get('lockout-ms'), 15 * 60_000, '--lockout-ms', 1),
      forgetMs: intSetting(get('lockout-forget-ms'), 15 * 60_000, '--lockout-forget-ms', 1),
    },
    trustProxy: trustProxySetting(get('trust-proxy')),
    logLevel: get('log-level') ?? 'info',
    role: roleSetting(get('role'), s3 !== undefined),
    shutdownGraceMs: intSetting(get('shutdown-grace-ms'), 30_000, '--shutdown-grace-ms'),
    ...keySetting('signing-key', get('signing-key'), get('signing-key-file')),
    ...keySetting('sealing-key', get('sealing-key'), get('sealing-key-file')),
  };
}

/**
 * `--role`: api and worker alone mean several processes, which need an external
 * store: the embedded one runs inside one instance, one per data dir.
 */
function roleSetting(v: string | undefined, externalStore: boolean): InstanceRole {
  const role = (v ?? 'all').toLowerCase();
  if (role !== 'api' && role !== 'worker' && role !== 'all') throw new Error(`--role must be api, worker or all, got "${v}"`);
  if (role !== 'all' && !externalStore) {
    throw new Error(`--role ${role} needs an external S3 store (--s3-endpoint): the embedded store serves one instance per data dir, which must then run --role all`);
  }
  return role;
}

/** FERRY_SIGNING_KEY (base64, from the environment only: a flag would show in ps) or --signing-key-file; likewise the sealing key. */
function keySetting(name: 'signing-key' | 'sealing-key', base64: string | undefined, file: string | undefined): { signingKey?: KeySource } | { sealingKey?: KeySource } {
  const field = name === 'signing-key' ? 'signingKey' : 'sealingKey';
  if (base64 !== undefined && file !== undefined) throw new Error(`give FERRY_${name.replace('-', '_').toUpperCase()} or --${name}-file, not both`);
  if (base64 !== undefined) {
    checkKey(base64, `FERRY_${name.replace('-', '_').toUpperCase()}`);
    return { [field]: { base64 } };
  }
  return file === undefined ? {} : { [field]: { file: path.resolve(file) } };
}

/** A key is 32 bytes in base64 (what `openssl rand -base64 32` prints), like the data dir's key files. */
export function checkKey(base64: string, what: string): Uint8Array {
  const text = base64.trim();
  const key = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || key.length !== 32) throw new Error(`${what} must be 32 bytes in base64 (e.g. openssl rand -base64 32)`);
  return key;
}

/**
 * `--trust-proxy`: off by default; `true`, or the proxies' comma-separated addresses/CIDRs.
 * No hop count: it cannot tell a proxy from a client that connects directly (Fastify refuses it too).
 */
function trustProxySetting(v: string | undefined): boolean | string {
  if (v === undefined || /^(0|false|no|off)$/i.test(v)) return false;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^\d+$/.test(v)) throw new Error(`--trust-proxy takes true or the proxies' addresses, not a hop count ("${v}")`);
  return v;
}

/** `--database URL`: PostgreSQL only (SQLite needs no URL: it lives in the data dir). */
function databaseSetting(v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^postgres(ql)?:\/\//i.test(v)) throw new Error(`--database takes a postgres:// URL (SQLite, the default, lives in --data-dir), got "${v.replace(/\/\/[^@/]*@/, '//***@')}"`);
  return v;
}
