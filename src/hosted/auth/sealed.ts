// Secrets the service must use again (a cloud connection's keys), so they cannot
// be hashed: sealed with AES-256-GCM under a key generated once into the data
// dir, apart from the database, so that a copy of the database alone does not
// give the keys away.
import fs from 'node:fs/promises';
import path from 'node:path';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface Sealer {
  seal(plain: string): string;
  /** Throws when the text was not sealed with this key or was altered. */
  open(sealed: string): string;
}

const VERSION = 'v1';

export function createSealer(key: Uint8Array): Sealer {
  if (key.length !== 32) throw new Error('the sealing key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    open(sealed) {
      const [version, b64] = sealed.split(':', 2);
      if (version !== VERSION || !b64) throw new Error('not a sealed value');
      const raw = Buffer.from(b64, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

/** DATA_DIR/sealing.key: 32 random bytes, base64, made once (mode 600). */
export async function loadOrCreateSealingKey(dataDir: string): Promise<Uint8Array> {
  const file = path.join(dataDir, 'sealing.key');
  try {
    return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  } catch {
    await fs.writeFile(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  }
}
