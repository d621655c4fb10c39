// `ferry admin`: Teams, users, roles and API keys, written straight into a data
// dir's database (the API has no invitation route). Safe while `ferry serve` runs.
// Besides: the embedded store's keys, and an external bucket's CORS rule.
import fs from 'node:fs';
import path from 'node:path';
import type { Command, OptionSpec } from './command.js';
import { parseFlags } from './command.js';
import { resolveHostedConfig } from '../hosted/config.js';
import { openConfiguredDatabase, type Db } from '../hosted/db/open.js';
import type { Role } from '../hosted/db/schema.js';
import {
  accountsOverview, addMember, createTeam, createUser, findTeam, findUserByEmail, isValidSubdomain, roleIn,
} from '../hosted/services/accounts.js';
import { resetPassword } from '../hosted/services/sessions.js';
import { MIN_PASSWORD_LENGTH } from '../api/hosted/auth.js';
import { issueApiKey } from '../hosted/services/apiKeys.js';
import { loadOrCreateStoreCredentials } from '../objectstore/index.js';
import { applyBucketCors, CORS_METHODS } from '../hosted/storage/bucketCors.js';
import { createS3Client } from '../hosted/storage/s3.js';
import { serveOptions } from './serve.js';

const pick = <T extends object, K extends keyof T>(o: T, keys: K[]) => Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;

const HELP = `usage: ferry admin <action> [options]

actions:
  add-team --name NAME [--subdomain SUB]
  add-user --email E [--password P] [--name NAME] --team TEAM [--role owner|admin|member]
                     creates the user when new; for a known user, adds the membership
                     (or changes the role); TEAM is a Team id or subdomain
  reset-password --email E [--password P]
                     ends every session of the user (their user tokens are refused)
                     and lifts a sign-in lock of the e-mail
  list               Teams, their members and roles, and users in no Team
  create-api-key --email E --team TEAM [--name NAME]
                     prints the key's secret once
  store-credentials  the embedded S3 store's endpoint, access key and secret key
  bucket-cors --s3-endpoint URL --s3-bucket B --s3-access-key K --s3-secret-key S
              [--s3-region R] [--s3-path-style] [--public-url URL | --listen HOST:PORT]
              [--portal-domain D] [--cors-origin LIST]   (no --data-dir: it needs no database)
                     lets the service's browser origins (as "ferry serve" computes them from
                     the same settings or FERRY_* variables) PUT, POST, GET and HEAD on an
                     external bucket with any header and ETag exposed (PutBucketCors), for
                     the Portal page; the bucket's other CORS rules are kept

options of every action:
  --data-dir DIR     the service's data dir (default as for "ferry serve": $FERRY_DATA_DIR
                     or $XDG_DATA_HOME/ferry/hosted)
  --database URL     the service's PostgreSQL database, as for "ferry serve" (also FERRY_DATABASE_URL)
  --json             machine-readable output

Passwords can come from FERRY_ADMIN_PASSWORD instead of --password, to keep them
out of the shell history. Exit codes: 0 done, 1 failed, 2 bad usage.`;

/** Bad usage (exit 2) as opposed to a failure (exit 1). */
class UsageError extends Error {}
class Failure extends Error {}

const common = { 'data-dir': { type: 'string' }, database: { type: 'string' }, json: { type: 'boolean' } } as const;
const actionOptions: Record<string, OptionSpec> = {
  'add-team': { ...common, name: { type: 'string' }, subdomain: { type: 'string' } },
  'add-user': { ...common, email: { type: 'string' }, password: { type: 'string' }, name: { type: 'string' }, team: { type: 'string' }, role: { type: 'string' } },
  'reset-password': { ...common, email: { type: 'string' }, password: { type: 'string' } },
  list: common,
  'create-api-key': { ...common, email: { type: 'string' }, team: { type: 'string' }, name: { type: 'string' } },
  'store-credentials': common,
  // The store and the origins, as `ferry serve` takes them.
  'bucket-cors': {
    json: { type: 'boolean' },
    ...pick(serveOptions, ['s3-endpoint', 's3-bucket', 's3-region', 's3-access-key', 's3-secret-key', 's3-path-style', 'public-url', 'listen', 'portal-domain', 'cors-origin']),
  },
};

type Values = Record<string, string | boolean | undefined>;

function required(v: Values, flag: string): string {
  const value = v[flag];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${flag} is required`);
  return value.trim();
}

function email(v: Values): string {
  const e = required(v, 'email');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e) || e.length > 254) throw new UsageError(`--email "${e}" is not an e-mail address`);
  return e;
}

function password(v: Values): string | undefined {
  const p = typeof v.password === 'string' ? v.password : process.env.FERRY_ADMIN_PASSWORD || undefined;
  if (p !== undefined && p.length < MIN_PASSWORD_LENGTH) throw new UsageError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  return p;
}

const ROLES: Role[] = ['owner', 'admin', 'member'];

async function team(db: Db, ref: string) {
  const t = await findTeam(db, ref);
  if (!t) throw new Failure(`no team with id or subdomain "${ref}"`);
  return t;
}

async function user(db: Db, address: string) {
  const u = await findUserByEmail(db, address);
  if (!u) throw new Failure(`no user with e-mail ${address}`);
  return u;
}

interface Out { print(text: string, data: unknown): void }

/** Each action checks its flags first (`check`), so bad usage writes nothing. */
interface Action<A> {
  check(v: Values): A;
  run(db: Db, a: A, out: Out): Promise<void>;
}
const action = <A>(a: Action<A>) => a as Action<unknown>;

const actions: Record<string, Action<unknown>> = {
  'add-team': action({
    check(v) {
      const sub = typeof v.subdomain === 'string' ? v.subdomain.toLowerCase() : undefined;
      if (sub !== undefined && !isValidSubdomain(sub)) throw new UsageError(`--subdomain "${sub}" must be letters, digits and inner hyphens (at most 63)`);
      return { name: required(v, 'name'), sub };
    },
    async run(db, { name, sub }, out) {
      if (sub && (await findTeam(db, sub))) throw new Failure(`the subdomain "${sub}" is taken`);
      const t = await createTeam(db, name, sub);
      out.print(`created team ${t.name} (id ${t.id}, subdomain ${t.subdomain})`, { id: t.id, name: t.name, subdomain: t.subdomain });
    },
  }),

  'add-user': action({
    check(v) {
      const role = (typeof v.role === 'string' ? v.role : 'member') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      const name = typeof v.name === 'string' && v.name.trim() !== '' ? v.name.trim() : undefined;
      return { address: email(v), role, teamRef: required(v, 'team'), pass: password(v), name };
    },
    async run(db, { address, role, teamRef, pass, name }, out) {
      const t = await team(db, teamRef);
      let u = await findUserByEmail(db, address);
      const created = !u;
      if (!u) {
        if (!pass) throw new UsageError('a new user needs --password (or FERRY_ADMIN_PASSWORD)');
        u = await createUser(db, address, pass, name);
      } else if (pass !== undefined || name !== undefined) {
        console.error(`note: ${u.email} exists; name and password are unchanged (use reset-password)`);
      }
      await addMember(db, t.id, u.id, role);
      out.print(`${created ? 'created' : 'updated'} ${u.email} (id ${u.id}): ${role} of ${t.name}`, {
        user: { id: u.id, email: u.email, name: u.name }, team_id: t.id, role, created,
      });
    },
  }),

  'reset-password': action({
    check(v) {
      const pass = password(v);
      if (!pass) throw new UsageError('--password (or FERRY_ADMIN_PASSWORD) is required');
      return { address: email(v), pass };
    },
    async run(db, { address, pass }, out) {
      const u = await user(db, address);
      await resetPassword(db, u, pass);
      out.print(`password of ${u.email} changed; every session of the user has ended`, { id: u.id, email: u.email });
    },
  }),

  list: action({
    check: () => ({}),
    async run(db, _a, out) {
      const all = await accountsOverview(db);
      const lines: string[] = [];
      for (const t of all.teams) {
        lines.push(`team ${t.name} (id ${t.id}, subdomain ${t.subdomain})`);
        for (const m of t.members) lines.push(`  ${m.role.padEnd(7)} ${m.email} (${m.name}, id ${m.user_id})`);
        if (t.members.length === 0) lines.push('  (no members)');
      }
      if (all.users_without_team.length > 0) {
        lines.push('users in no team:');
        for (const u of all.users_without_team) lines.push(`  ${u.email} (${u.name}, id ${u.id})`);
      }
      out.print(lines.length > 0 ? lines.join('\n') : 'no teams and no users yet', all);
    },
  }),

  'create-api-key': action({
    check(v) {
      const name = typeof v.name === 'string' && v.name.trim() !== '' ? v.name.trim() : 'ferry admin';
      return { address: email(v), teamRef: required(v, 'team'), name };
    },
    async run(db, { address, teamRef, name }, out) {
      const t = await team(db, teamRef);
      const u = await user(db, address);
      if (!(await roleIn(db, t.id, u.id))) throw new Failure(`${u.email} is not a member of team ${t.name}`);
      const { row, secret } = await issueApiKey(db, { teamId: t.id, userId: u.id, name });
      out.print(
        `API key ${row.id} for ${u.email} in ${t.name}:\n${secret}\nIt is shown only now; send it as the X-API-KEY header.`,
        { id: row.id, key: secret, team_id: t.id, user_id: u.id, name },
      );
    },
  }),
};

/** Needs no database: the store's keys live in files of the data dir. */
async function storeCredentials(dataDir: string, out: Out): Promise<void> {
  const creds = await loadOrCreateStoreCredentials(dataDir);
  const config = resolveHostedConfig({ 'data-dir': dataDir }, process.env);
  const host = ['0.0.0.0', '::'].includes(config.s3Listen.host) ? '127.0.0.1' : config.s3Listen.host;
  const endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${config.s3Listen.port}`;
  out.print(
    [
      `endpoint    ${endpoint}  (the default of "ferry serve"; its "ferry hosted service ready" log line shows the real one as s3)`,
      `bucket      ${config.bucket}`,
      `access key  ${creds.accessKey}`,
      `secret key  ${creds.secretKey}`,
      '',
      `e.g. AWS_ACCESS_KEY_ID=${creds.accessKey} AWS_SECRET_ACCESS_KEY=${creds.secretKey} aws --endpoint-url ${endpoint} s3 ls s3://${config.bucket}/`,
    ].join('\n'),
    { endpoint, bucket: config.bucket, access_key: creds.accessKey, secret_key: creds.secretKey },
  );
}

/** Needs no database: the rule goes to the bucket, for the origins the service's settings give. */
async function bucketCors(values: Values, out: Out): Promise<void> {
  const flags = Object.fromEntries(Object.entries(values).filter(([k, v]) => k !== 'json' && v !== undefined)) as Record<string, string | boolean>;
  let config;
  try {
    config = resolveHostedConfig(flags, process.env);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const s3 = config.s3;
  if (!s3) throw new UsageError('bucket-cors is for an external store: give --s3-endpoint (or FERRY_S3_ENDPOINT) and its keys; the embedded store takes its origins at start (--cors-origin)');
  const origins = config.corsOrigins;
  const client = createS3Client(s3);
  try {
    const r = await applyBucketCors(client, s3.bucket, origins);
    const data = { bucket: s3.bucket, endpoint: s3.endpoint, origins, methods: CORS_METHODS, result: r.state, ...('code' in r ? { code: r.code, step: r.step } : {}) };
    switch (r.state) {
      case 'unchanged':
        return out.print(`bucket ${s3.bucket} already lets ${origins.join(', ')} ${CORS_METHODS.join(', ')} with any header and ETag exposed; nothing changed`, data);
      case 'applied':
        return out.print(
          `bucket ${s3.bucket}: CORS rule "${r.rules[0]!.ID}" lets ${origins.join(', ')} ${CORS_METHODS.join(', ')} with any header and ETag exposed` +
            (r.kept > 0 ? `; the bucket's ${r.kept} other rule${r.kept > 1 ? 's' : ''} kept after it` : ''),
          data,
        );
      case 'denied':
        throw new Failure(`bucket ${s3.bucket}: the store refused ${r.step} (${r.code}): these credentials may not ${r.step === 'PutBucketCors' ? 'change' : 'read'} the bucket's CORS; run this with the bucket owner's keys, or have its owner add the rule (see docs/deploy.md)`);
      case 'unsupported':
        throw new Failure(`bucket ${s3.bucket}: the store does not implement ${r.step} (${r.code}); set its CORS the store's own way: ${origins.join(', ')} need ${CORS_METHODS.join(', ')}, any header, ETag exposed`);
      case 'failed':
        throw new Failure(`bucket ${s3.bucket}: ${r.step} failed (${r.code})`);
    }
  } finally {
    client.destroy();
  }
}

export const admin: Command = {
  async run(args) {
    const [name, ...rest] = args;
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      console.log(HELP);
      return name === undefined ? 2 : 0;
    }
    const spec = actionOptions[name];
    if (!spec) {
      console.error(`ferry admin: unknown action "${name}"\n\n${HELP}`);
      return 2;
    }
    let close = async () => {};
    try {
      let values: Values;
      try {
        values = parseFlags(rest, spec, HELP).values as Values;
      } catch (err) {
        throw new UsageError(err instanceof Error ? err.message : String(err));
      }
      const json = values.json === true;
      const out: Out = { print: (text, data) => console.log(json ? JSON.stringify(data, null, 2) : text) };
      if (name === 'bucket-cors') {
        await bucketCors(values, out);
        return 0;
      }
      const config = resolveHostedConfig({ 'data-dir': values['data-dir'] as string | undefined, database: values.database as string | undefined }, process.env);
      const dataDir = config.dataDir;
      if (name === 'store-credentials') {
        fs.mkdirSync(dataDir, { recursive: true });
        await storeCredentials(dataDir, out);
        return 0;
      }
      const act = actions[name]!;
      const parsed = act.check(values);
      // A mistyped --data-dir must not quietly start an empty database, except to set one up.
      if (name !== 'add-team' && !config.database && !fs.existsSync(path.join(dataDir, 'ferry.db'))) {
        throw new Failure(`no Ferry database in ${dataDir} (run "ferry serve" or "ferry admin add-team" first, or pass --data-dir)`);
      }
      fs.mkdirSync(dataDir, { recursive: true });
      const opened = await openConfiguredDatabase({ database: config.database, sqliteFile: path.join(dataDir, 'ferry.db') });
      close = opened.close;
      await act.run(opened.db, parsed, out);
      return 0;
    } catch (err) {
      if (err instanceof UsageError) {
        console.error(`ferry admin ${name}: ${err.message}\nRun "ferry admin --help" for the options.`);
        return 2;
      }
      const message = err instanceof Error ? err.message : String(err);
      console.error(`ferry admin ${name}: ${/UNIQUE constraint|duplicate key value/.test(message) ? 'it exists already' : message}`);
      return 1;
    } finally {
      await close();
    }
  },
};
