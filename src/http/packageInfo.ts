// Ferry's own package.json, found up from this module (which runs from src/ or
// bundled in dist/): its folder, and the version both servers report.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of Ferry's package.json; the working folder when none is found. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      if ((JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'ferry') return dir;
    } catch {
      // no readable package.json here: look further up
    }
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

/** The version in Ferry's package.json; 0.0.0 when it cannot be read. */
export function packageVersion(root = packageRoot()): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
