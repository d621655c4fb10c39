// The service's secret keys (token signing, sealing): given in the settings when
// several instances must share them, else made once in the data dir.
import fs from 'node:fs/promises';
import { checkKey, type KeySource } from '../config.js';

/** The key `source` gives (FERRY_*_KEY in base64, or a file holding that), or `fallback()` (the data dir's file) without one. */
export async function loadKey(source: KeySource | undefined, what: string, fallback: () => Promise<Uint8Array>): Promise<Uint8Array> {
  if (!source) return fallback();
  if ('base64' in source) return checkKey(source.base64, what);
  let text: string;
  try {
    text = await fs.readFile(source.file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the ${what} file ${source.file}: ${(err as Error).message}`);
  }
  return checkKey(text, `the ${what} file ${source.file}`);
}
