// `ferry serve`: the hosted service with its embedded object store.
import type { Command } from './command.js';
import { parseFlags, untilSignal } from './command.js';
import { resolveHostedConfig } from '../hosted/config.js';
import { startHostedService } from '../hosted/server.js';

const HELP = `usage: ferry serve [options]

  --listen HOST:PORT        where the API listens (default 127.0.0.1:7400)
  --data-dir DIR            records, objects and keys (default $XDG_DATA_HOME/ferry/hosted)
  --public-url URL          the address clients use (default http://LISTEN)
  --portal-domain DOMAIN    Portal pages also answer at SUBDOMAIN.DOMAIN (a wildcard DNS name
                            pointing at this service), besides PUBLIC_URL/p/SUBDOMAIN
  --cors-origin LIST        more browser origins the embedded store accepts uploads from,
                            comma-separated (https://app.example.com, https://*.example.com)
  --init-owner EMAIL:PASS   create the first owner and their Team if missing
  --smtp-host H --smtp-port N --smtp-secure --smtp-user U --smtp-pass P --smtp-from ADDR
                            send e-mail through SMTP (default: .eml files in DATA_DIR/outbox)
  --s3-listen HOST:PORT     where the embedded S3 store listens (default: API port + 1)
  --s3-endpoint URL --s3-bucket B --s3-region R --s3-access-key K --s3-secret-key S --s3-path-style
                            use an external S3-compatible store instead of the embedded one
  --user-token-ttl SECONDS  how long a sign-in lasts before it must be refreshed (default 43200, 12 h)
  --webhook-retry-base-ms N the wait after a webhook's first failed attempt, doubling after each
                            (default 10000; 5 attempts in all)
  --webhook-timeout-ms N    how long a webhook receiver has to answer (default 10000)
  --jobs-concurrency N      background jobs (webhook deliveries, cloud transfers) run at once (default 4)
  --cloud-part-size BYTES   cloud transfers copy objects larger than this in parts of this size
                            (default 67108864, 64 MiB; at least 5 MiB)
  --cloud-part-concurrency N parts of one object copied at once (default 4)
  --cloud-attempts N        attempts of a cloud transfer, each resuming the last (default 5)
  --cloud-retry-base-ms N   the wait after a transfer's first failed attempt, doubling (default 30000)
  --cloud-aws-endpoint URL  send amazon_s3 connections to this S3 endpoint instead of AWS
  --gateway-heartbeat-ms N  how often the service pings each storage gateway's socket (default 20000)
  --gateway-recheck-ms N    a transfer waiting for its storage gateway looks again this often (default 60000)
  --gateway-wait-ms N       a transfer whose storage gateway stays away this long is given up
                            (default 604800000, 7 days)
  --updates-dir DIR         serve the desktop app's update feed from DIR at /updates/
                            (latest.yml, latest-mac.yml, latest-linux.yml, installers, blockmaps)
  --log-level LEVEL         pino level (default info)

Every option can also be set as FERRY_<OPTION> in the environment, e.g. FERRY_DATA_DIR.`;

export const serveOptions = {
  listen: { type: 'string' },
  'data-dir': { type: 'string' },
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
  's3-listen': { type: 'string' },
  's3-endpoint': { type: 'string' },
  's3-bucket': { type: 'string' },
  's3-region': { type: 'string' },
  's3-access-key': { type: 'string' },
  's3-secret-key': { type: 'string' },
  's3-path-style': { type: 'boolean' },
  'user-token-ttl': { type: 'string' },
  'webhook-retry-base-ms': { type: 'string' },
  'webhook-timeout-ms': { type: 'string' },
  'jobs-concurrency': { type: 'string' },
  'jobs-poll-ms': { type: 'string' },
  'jobs-lease-ms': { type: 'string' },
  'cloud-part-size': { type: 'string' },
  'cloud-part-concurrency': { type: 'string' },
  'cloud-attempts': { type: 'string' },
  'cloud-retry-base-ms': { type: 'string' },
  'cloud-aws-endpoint': { type: 'string' },
  'gateway-heartbeat-ms': { type: 'string' },
  'gateway-recheck-ms': { type: 'string' },
  'gateway-wait-ms': { type: 'string' },
  'updates-dir': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

export const serve: Command = {
  async run(args) {
    const { values } = parseFlags(args, serveOptions, HELP);
    const config = resolveHostedConfig(values);
    const running = await startHostedService(config);
    // Listen for signals before saying we are ready, so a signal right after the ready line is handled.
    const signalled = untilSignal();
    running.ctx.log.info({ url: running.url, s3: running.s3Url, dataDir: config.dataDir }, 'ferry hosted service ready');
    const signal = await signalled;
    running.ctx.log.info({ signal }, 'shutting down');
    await running.close();
    running.ctx.log.info('stopped');
    return 0;
  },
};
