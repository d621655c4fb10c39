// Where the addons built from native/ (scripts/build-native.mjs) are, and
// loading them. Each is an optimisation with a plain-Node fallback, so a missing
// or unloadable addon answers undefined or null, never an error.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built file of addon `name`: up from this module, which runs from src/native or bundled in dist/. */
export function addonFile(name: string): string | undefined {
  const rel = path.join('native', name, 'build', 'Release', `${name}.node`);
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++, dir = path.dirname(dir)) {
    const file = path.join(dir, rel);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

/** Addon `name` loaded, or null when it is not built or was built for another platform or Node. */
export function loadAddon<T>(name: string): { addon: T; file: string } | null {
  const file = addonFile(name);
  if (!file) return null;
  try {
    return { addon: createRequire(import.meta.url)(file) as T, file };
  } catch {
    return null;
  }
}
