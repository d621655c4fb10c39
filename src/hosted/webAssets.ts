// The script of the Portal upload page (web/portal/), as the service serves it.
// `npm run build` bundles it into dist/web/; in a checkout whose web/ sources are
// newer than that bundle (or that has none), the service runs that build step
// itself once, so the page never runs stale code.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface WebAsset {
  body: Buffer;
  /** The same bytes gzipped once, for the browsers that take them (all do): the page's RE2 is most of its weight. */
  gzipped: Buffer;
  etag: string;
}

/** The repository (or installed package) root: the nearest folder above this file with web/ or dist/web/. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'package.json')) && (fs.existsSync(path.join(dir, 'web')) || fs.existsSync(path.join(dir, 'dist', 'web')))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('cannot find the web page sources (web/) or their build (dist/web/)');
}

/** The newest modification time of a file, or of anything in a folder. */
function newest(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...fs.readdirSync(p).map((name) => newest(path.join(p, name))));
}

export const PORTAL_BUNDLE = path.join('dist', 'web', 'portal-upload.js');
/** What the page imports from outside web/: sizes, speeds and times as the app shows them, the service's wire rules. */
const SHARED = [path.join('src', 'format'), path.join('src', 'api')];

let cached: Promise<WebAsset> | undefined;

async function load(): Promise<WebAsset> {
  const root = packageRoot();
  const built = path.join(root, PORTAL_BUNDLE);
  const sources = path.join(root, 'web');
  const inputs = () => Math.max(newest(sources), ...SHARED.map((f) => newest(path.join(root, f))));
  const stale = fs.existsSync(sources) && (!fs.existsSync(built) || fs.statSync(built).mtimeMs < inputs());
  if (stale) {
    // The build script's own step, so the bundle is made one way only.
    const script: { buildWeb(): Promise<void> } = await import(pathToFileURL(path.join(root, 'scripts', 'build.mjs')).href);
    await script.buildWeb();
  }
  const body = fs.readFileSync(built);
  return { body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

/** Loaded once per process; a failed load is tried again on the next request. */
export function portalScript(): Promise<WebAsset> {
  cached ??= load().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
