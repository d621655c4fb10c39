// `ferry serve`: the hosted service with its embedded object store (or an external one), in one of three roles.
import type { Command } from './command.js';
import { parseFlags, untilSignal } from './command.js';
import { resolveHostedConfig, type HostedConfig } from '../hosted/config.js';
import { startHostedService } from '../hosted/server.js';
import { checkBucketCors, corsCheckMessage } from '../hosted/storage/bucketCors.js';
import { createS3Client } from '../hosted/storage/s3.js';
import type { Logger } from 'pino';

const HELP = `usage: ferry serve [options]

  --listen HOST:PORT        where the API listens (default 127.0.0.1:7400)
  --data-dir DIR            records, objects and keys (default $XDG_DATA_HOME/ferry/hosted)
  --database URL            keep records in PostgreSQL (postgres://USER:PASS@HOST:PORT/DB; also
                            FERRY_DATABASE_URL) instead of SQLite's DATA_DIR/ferry.db
  --public-url URL          the address clients use (default http://LISTEN)
  --portal-domain DOMAIN    Portal pages also answer at SUBDOMAIN.DOMAIN (a wildcard DNS name
                            pointing at this service), besides PUBLIC_URL/p/SUBDOMAIN
  --cors-origin LIST        more browser origins the store accepts uploads from, comma-separated
                            (https://app.example.com, https://*.example.com): the embedded store's
                            setting; an external bucket's CORS is checked at start against them
                            (and "ferry admin bucket-cors" applies them)
  --init-owner EMAIL:PASS   create the first owner and their Team if missing
  --smtp-host H --smtp-port N --smtp-secure --smtp-user U --smtp-pass P --smtp-from ADDR
                            send e-mail through SMTP (default: .eml files in DATA_DIR/outbox)
  --smtp-ca-file FILE       check the SMTP relay's certificate against this CA (PEM) instead of the
                            system's; the certificate is always checked unless --smtp-tls-insecure
  --smtp-tls-insecure       take any SMTP certificate (a local relay with a self-signed one)
  --s3-listen HOST:PORT     where the embedded S3 store listens (default: API port + 1)
  --s3-endpoint URL --s3-bucket B --s3-region R --s3-access-key K --s3-secret-key S --s3-path-style
                            use an external S3-compatible store instead of the embedded one
  --user-token-ttl SECONDS  how long a sign-in lasts before it must be refreshed (default 43200, 12 h)
  --max-session-days N      refreshes stop N days after the sign-in with the password; the client
                            then signs in again (default 30)
  --upload-token-ttl-hours H how long an anonymous Portal uploader's token lives (default 168, 7 days;
                            it also ends when its Portal is deactivated, expires or is deleted)
  --unfinished-package-ttl-hours H
                            a Package left unfinished (state new, no activity) this long is expired
                            and its uploads and objects deleted (default 168, 7 days; 0: never)
  --webhook-retry-base-ms N the wait after a webhook's first failed attempt, doubling after each
                            (default 10000; 5 attempts in all)
  --webhook-timeout-ms N    how long a webhook receiver has to answer (default 10000)
  --jobs-concurrency N      background jobs (webhook deliveries, cloud transfers) run at once (default 4)
  --cloud-part-size BYTES   cloud transfers copy objects larger than this in parts of this size
                            (default 67108864, 64 MiB; at least 5 MiB)
  --cloud-part-concurrency N parts of one object copied at once (default 4)
  --cloud-page-size N       files (and transfer items) a cloud transfer reads at a time (default 1000)
  --cloud-attempts N        attempts of a cloud transfer, each resuming the last (default 5)
  --cloud-retry-base-ms N   the wait after a transfer's first failed attempt, doubling (default 30000)
  --cloud-aws-endpoint URL  send amazon_s3 connections to this S3 endpoint instead of AWS
  --allow-private-targets VALUE
                            webhooks and cloud connections (addresses tenants choose) may reach
                            non-public addresses: true (all but cloud metadata services), or
                            CIDRs (e.g. 10.0.0.0/8,127.0.0.1/32); default off: public addresses only
  --events-heartbeat-ms N   an event stream's keep-alive line, and its look for events it was not told of (default 15000)
  --events-max-streams N    event streams one user, API key or package token may hold open at once (default 20)
  --gateway-heartbeat-ms N  how often the service pings each storage gateway's socket (default 20000)
  --gateway-recheck-ms N    a transfer waiting for its storage gateway looks again this often (default 60000)
  --gateway-wait-ms N       a transfer whose storage gateway stays away this long is given up
                            (default 604800000, 7 days)
  --clamd SOCKET|HOST:PORT  scan every uploaded file with clamd (INSTREAM); flagged files are
                            refused for download (default: no scanning)
  --clamd-timeout-ms N      how long clamd may stay silent during a scan (default 300000, 5 min)
  --clamd-attempts N        tries of one scan before the file is marked scan failed (default 8)
  --clamd-retry-base-ms N   the wait after a scan's first failed try, doubling (default 30000)
  --updates-dir DIR         serve the desktop app's update feed from DIR at /updates/
                            (latest.yml, latest-mac.yml, latest-linux.yml, installers, blockmaps)
  --rate-limit-sign-in N    sign-ins (POST /v1/auth) per address and window (default 10)
  --rate-limit-public N     requests without a credential (Links, the /l/ page, access codes)
                            per address and window (default 60)
  --rate-limit-api N        requests per API key or user token and window (default 600)
  --rate-limit-package N    requests per package token's Package and window (default 6000)
  --rate-limit-window-ms N  the rate limits' window (default 60000); a limit of 0 turns it off
  --lockout-free N          wrong Link passwords / access codes per address, and wrong passwords
                            per account from all addresses, that cost nothing (default 3)
  --lockout-delay-ms N      then the wait before the next try, doubling each time (default 1000)
  --lockout-after N         wrong tries after which that Link or Portal is locked for the address,
                            or signing in to that account for everyone (default 10)
  --lockout-ms N            how long the lock lasts (default 900000, 15 min)
  --lockout-forget-ms N     wrong tries are forgotten this long after the last one (default 900000)
  --trust-proxy VALUE       take the client address from X-Forwarded-For: the proxies' addresses
                            (e.g. 127.0.0.1,10.0.0.0/8), or true to trust any; default off (the socket's address)
  --role api|worker|all     api: serve HTTP, run no background work but storage gateway transfers;
                            worker: run the other background work (jobs, sweeps), serve only
                            /healthz and /readyz; all: both (default).
                            api and worker need an external store (--s3-endpoint)
  --shutdown-grace-ms N     on SIGTERM/SIGINT, how long requests and jobs in flight may take to
                            finish before they are cut and handed back (default 30000)
  --signing-key-file FILE   the token signing key (32 bytes, base64); or FERRY_SIGNING_KEY in the
                            environment; default DATA_DIR/signing.key, made once
  --sealing-key-file FILE   the key sealing stored secrets (32 bytes, base64); or FERRY_SEALING_KEY;
                            default DATA_DIR/sealing.key. Instances behind one address share both keys
  --log-level LEVEL         pino level (default info)

Every option can also be set as FERRY_<OPTION> in the environment, e.g. FERRY_DATA_DIR.`;

export const serveOptions = {
  listen: { type: 'string' },
  'data-dir': { type: 'string' },
  database: { type: 'string' },
  'public-url': { type: 'string' },
  'link-url': { type: 'string' },
  'portal-domain': { type: 'string' },
  'cors-origin': { type: 'string' },
  'init-owner': { type: 'string' },
  'smtp-host': { type: 'string' },
  'smtp-port': { type: 'string' },
  'smtp-secure': { type: 'boolean' },
  'smtp-user': { type: 'string' },
  'smtp-pass': { type: 'string' },
  'smtp-from': { type: 'string' },
  'smtp-ca-file': { type: 'string' },
  'smtp-tls-insecure': { type: 'boolean' },
  's3-listen': { type: 'string' },
  's3-endpoint': { type: 'string' },
  's3-bucket': { type: 'string' },
  's3-region': { type: 'string' },
  's3-access-key': { type: 'string' },
  's3-secret-key': { type: 'string' },
  's3-path-style': { type: 'boolean' },
  'user-token-ttl': { type: 'string' },
  'max-session-days': { type: 'string' },
  'upload-token-ttl-hours': { type: 'string' },
  'unfinished-package-ttl-hours': { type: 'string' },
  'webhook-retry-base-ms': { type: 'string' },
  'webhook-timeout-ms': { type: 'string' },
  'jobs-concurrency': { type: 'string' },
  'jobs-poll-ms': { type: 'string' },
  'jobs-lease-ms': { type: 'string' },
  'cloud-part-size': { type: 'string' },
  'cloud-part-concurrency': { type: 'string' },
  'cloud-page-size': { type: 'string' },
  'cloud-attempts': { type: 'string' },
  'cloud-retry-base-ms': { type: 'string' },
  'cloud-aws-endpoint': { type: 'string' },
  'allow-private-targets': { type: 'string' },
  'gateway-heartbeat-ms': { type: 'string' },
  'events-heartbeat-ms': { type: 'string' },
  'events-max-streams': { type: 'string' },
  'gateway-recheck-ms': { type: 'string' },
  'gateway-wait-ms': { type: 'string' },
  clamd: { type: 'string' },
  'clamd-timeout-ms': { type: 'string' },
  'clamd-attempts': { type: 'string' },
  'clamd-retry-base-ms': { type: 'string' },
  'updates-dir': { type: 'string' },
  'rate-limit-sign-in': { type: 'string' },
  'rate-limit-public': { type: 'string' },
  'rate-limit-api': { type: 'string' },
  'rate-limit-package': { type: 'string' },
  'rate-limit-window-ms': { type: 'string' },
  'lockout-free': { type: 'string' },
  'lockout-delay-ms': { type: 'string' },
  'lockout-after': { type: 'string' },
  'lockout-ms': { type: 'string' },
  'lockout-forget-ms': { type: 'string' },
  'trust-proxy': { type: 'string' },
  'log-level': { type: 'string' },
  role: { type: 'string' },
  'shutdown-grace-ms': { type: 'string' },
  'signing-key-file': { type: 'string' },
  'sealing-key-file': { type: 'string' },
} as const;

/**
 * The Portal page uploads from the browser straight to the store: an external
 * bucket needs a CORS rule for the service's origins. Said at start, not refused.
 */
async function logBucketCors(config: HostedConfig, log: Logger): Promise<void> {
  const s3 = config.s3!;
  const client = createS3Client(s3);
  try {
    const { warn, message } = corsCheckMessage(await checkBucketCors(client, s3.bucket, config.corsOrigins), s3.bucket, config.corsOrigins);
    if (warn) log.warn({ bucket: s3.bucket, origins: config.corsOrigins }, message);
    else log.info({ bucket: s3.bucket }, message);
  } finally {
    client.destroy();
  }
}

export const serve: Command = {
  async run(args) {
    const { values } = parseFlags(args, serveOptions, HELP);
    const config = resolveHostedConfig(values);
    const running = await startHostedService(config);
    if (config.s3 && config.role !== 'worker') await logBucketCors(config, running.ctx.log);
    // Listen for signals before saying we are ready, so a signal right after the ready line is handled.
    const signalled = untilSignal();
    running.ctx.log.info({ url: running.url, s3: running.s3Url, dataDir: config.dataDir, role: config.role }, 'ferry hosted service ready');
    const signal = await signalled;
    // A second signal is not caught: it stops the process at once.
    running.ctx.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down');
    await running.close({ graceMs: config.shutdownGraceMs });
    running.ctx.log.info('stopped');
    return 0;
  },
};
