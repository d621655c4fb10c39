// `ferry objectstore`: the embedded S3-compatible store on its own, e.g. as the
// external store of several services, or for aws-cli/rclone experiments.
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { Command } from './command.js';
import { parseFlags, untilSignal } from './command.js';
import { parseHostPort } from '../hosted/config.js';
import { loadOrCreateStoreCredentials, startObjectStore } from '../objectstore/index.js';
import { boundHeapGrowth } from '../threads/heapGrowth.js';

const HELP = `usage: ferry objectstore [options]

  --listen HOST:PORT   where the S3 API listens (default 127.0.0.1:7401)
  --data-dir DIR       where buckets and objects are kept
                       (default $XDG_DATA_HOME/ferry/objectstore)
  --access-key K       the access key clients sign with
  --secret-key S       its secret; without both keys, the ones generated and kept
                       in DATA_DIR are used
  --bucket B           a bucket to create at start; repeat for several
  --region R           the region clients sign for (default us-east-1)
  --cors-origin LIST   browser origins allowed to call the store, comma-separated
                       (https://app.example.com, or https://*.example.com for its subdomains)
  --log-level LEVEL    pino level (default info)

Every option can also be set as FERRY_OBJECTSTORE_<OPTION>, e.g. FERRY_OBJECTSTORE_SECRET_KEY,
which keeps the secret out of the process list.`;

const options = {
  listen: { type: 'string' },
  'data-dir': { type: 'string' },
  'access-key': { type: 'string' },
  'secret-key': { type: 'string' },
  bucket: { type: 'string', multiple: true },
  region: { type: 'string' },
  'cors-origin': { type: 'string' },
  'log-level': { type: 'string' },
} as const;

function defaultStoreDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'ferry', 'objectstore');
}

export const objectstore: Command = {
  async run(args) {
    // parseFlags is not generic over the options, so the values are typed here.
    const values = parseFlags(args, options, HELP).values as { [K in Exclude<keyof typeof options, 'bucket'>]?: string } & { bucket?: string[] };
    const env = process.env;
    const get = (flag: Exclude<keyof typeof options, 'bucket'>) =>
      values[flag] ?? (env[`FERRY_OBJECTSTORE_${flag.replace(/-/g, '_').toUpperCase()}`] || undefined);
    const listen = parseHostPort(get('listen') ?? '127.0.0.1:7401', '--listen');
    const dataDir = path.resolve(get('data-dir') ?? defaultStoreDir(env));
    let accessKey = get('access-key');
    let secretKey = get('secret-key');
    if ((accessKey === undefined) !== (secretKey === undefined)) {
      console.error('ferry objectstore: --access-key and --secret-key go together');
      return 2;
    }
    const keysFromDataDir = accessKey === undefined;
    if (accessKey === undefined || secretKey === undefined) ({ accessKey, secretKey } = await loadOrCreateStoreCredentials(dataDir));
    const buckets = values.bucket ?? (env.FERRY_OBJECTSTORE_BUCKET ? env.FERRY_OBJECTSTORE_BUCKET.split(',') : []);
    const region = get('region') ?? 'us-east-1';
    const log = pino({ level: get('log-level') ?? 'info' });
    const corsOrigins = (get('cors-origin') ?? '').split(',').map((o) => o.trim()).filter(Boolean);
    boundHeapGrowth();
    const store = await startObjectStore({ ...listen, dataDir, accessKey, secretKey, region, buckets, corsOrigins, logger: log });
    const signalled = untilSignal(); // before the ready line, so a signal right after it is handled
    // The secret itself is not logged: logs travel further than terminals.
    log.info(
      {
        url: store.url,
        dataDir,
        region,
        buckets,
        accessKey,
        secretKey: keysFromDataDir ? `see "ferry admin store-credentials --data-dir ${dataDir}"` : 'as given',
      },
      'ferry object store ready',
    );
    const signal = await signalled;
    log.info({ signal }, 'shutting down');
    await store.close();
    return 0;
  },
};
