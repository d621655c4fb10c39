// The embedded store's own key pair: generated once, then reused so pre-signed
// URLs and configured clients keep working across restarts.

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface StoreCredentials {
  accessKey: string;
  secretKey: string;
}

const FILE = 'objectstore-credentials.json';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function randomAccessKey(): string {
  // AWS-like shape: 20 upper-case alphanumerics. Modulo bias over 36 symbols is irrelevant for an identifier.
  return 'FERRY' + [...randomBytes(15)].map((b) => ALNUM[b % ALNUM.length]).join('');
}

function isCredentials(v: unknown): v is StoreCredentials {
  const c = v as StoreCredentials | null;
  return typeof c?.accessKey === 'string' && c.accessKey.length > 0 && typeof c.secretKey === 'string' && c.secretKey.length >= 16;
}

async function readCredentials(path: string): Promise<StoreCredentials> {
  const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (!isCredentials(parsed)) throw new Error(`${path} does not hold valid object store credentials`);
  return { accessKey: parsed.accessKey, secretKey: parsed.secretKey };
}

export async function loadOrCreateStoreCredentials(dataDir: string): Promise<StoreCredentials> {
  const path = join(dataDir, FILE);
  try {
    return await readCredentials(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dataDir, { recursive: true });
  const created = { accessKey: randomAccessKey(), secretKey: randomBytes(30).toString('base64url') };
  try {
    // 'wx': if another process created it first, its keys win and we read them back.
    await writeFile(path, JSON.stringify(created, null, 2) + '\n', { flag: 'wx', mode: 0o600 });
    return created;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readCredentials(path);
  }
}
