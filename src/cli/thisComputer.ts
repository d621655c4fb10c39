// "Try it on this computer": the hosted service with its embedded S3 store run
// beside the agent, with data in the service's data dir (by default the same as
// `ferry serve` and `ferry start`). Its first start creates an owner, a Team and
// an API key, kept in DATA_DIR/first-owner.txt for the user and for the agent,
// which signs in with that key.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { resolveHostedConfig, type HostedConfig } from '../hosted/config.js';
import type { Db } from '../hosted/db/open.js';
import { startHostedService } from '../hosted/server.js';
import { addMember, createTeam, createUser } from '../hosted/services/accounts.js';
import { issueApiKey } from '../hosted/services/apiKeys.js';
import { newSecret } from '../hosted/ids.js';

export const FIRST_OWNER = 'admin@ferry.local';

export interface FirstOwner { email: string; password: string; apiKey: string; teamId: string; subdomain: string }

export interface ThisComputer {
  url: string;
  s3Url: string;
  config: HostedConfig;
  /** DATA_DIR/first-owner.txt */
  ownerFile: string;
  /** The owner's API key, from this start or the file; undefined when the file is gone. */
  ownerKey: string | undefined;
  /** Set on the start that created the owner: shown to the user once. */
  first: FirstOwner | undefined;
  close(): Promise<void>;
}

/** On an empty database: the owner, their Team and an API key, in one transaction. */
async function createFirstOwner(db: Db): Promise<FirstOwner | undefined> {
  return db.transaction().execute(async (trx) => {
    if (await trx.selectFrom('users').select('id').limit(1).executeTakeFirst()) return undefined;
    const password = newSecret(15);
    const user = await createUser(trx, FIRST_OWNER, password, 'Admin');
    const team = await createTeam(trx, 'Ferry');
    await addMember(trx, team.id, user.id, 'owner');
    const { secret } = await issueApiKey(trx, { teamId: team.id, userId: user.id, name: 'ferry start' });
    return { email: user.email, password, apiKey: secret, teamId: team.id, subdomain: team.subdomain };
  });
}

/** The first owner's credentials, kept once for the user (readable by them only). */
async function writeFirstOwner(file: string, first: FirstOwner): Promise<void> {
  const text = [`e-mail   ${first.email}`, `password ${first.password}`, `API key  ${first.apiKey}`, `team     ${first.teamId} (subdomain ${first.subdomain})`, ''];
  await fs.writeFile(file, text.join('\n'), { mode: 0o600 });
  await fs.chmod(file, 0o600);
}

/** The API key kept in first-owner.txt, if it is there. */
async function apiKeyIn(file: string): Promise<string | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return /^API key +(\S+)$/m.exec(text)?.[1];
}

type ServeFlags = Record<string, string | boolean | undefined>;

/**
 * `ferry serve`'s flags as this computer's service takes them. One user on their
 * own computer: their MinIO or webhook receiver on localhost or the home network
 * is what they connect to, so private addresses are allowed (not cloud metadata
 * services) unless --allow-private-targets / FERRY_ALLOW_PRIVATE_TARGETS says otherwise.
 */
export function thisComputerFlags(serveFlags: ServeFlags, env: NodeJS.ProcessEnv = process.env): ServeFlags {
  if (serveFlags['allow-private-targets'] !== undefined || env.FERRY_ALLOW_PRIVATE_TARGETS) return serveFlags;
  return { ...serveFlags, 'allow-private-targets': 'true' };
}

/** Starts the service with `ferry serve`'s flags (data dir, addresses, …), and its owner on the first start. */
export async function startThisComputer(serveFlags: ServeFlags, log: Logger): Promise<ThisComputer> {
  const config = resolveHostedConfig(thisComputerFlags(serveFlags));
  const running = await startHostedService(config, log.child({ component: 'service' }));
  const ownerFile = path.join(config.dataDir, 'first-owner.txt');
  try {
    const first = await createFirstOwner(running.ctx.db);
    if (first) await writeFirstOwner(ownerFile, first);
    return { url: running.url, s3Url: running.s3Url, config, ownerFile, ownerKey: first?.apiKey ?? (await apiKeyIn(ownerFile)), first, close: () => running.close() };
  } catch (err) {
    await running.close();
    throw err;
  }
}
