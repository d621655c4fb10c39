// The desktop app's update feed, when the service was started with --updates-dir:
// GET /updates/{file} serves latest.yml, latest-mac.yml, latest-linux.yml, the
// installers and their blockmaps from that folder (electron-updater's generic
// provider). Names only: nothing outside the folder is reachable.
import fs from 'node:fs';
import path from 'node:path';
import { Type } from 'typebox';
import type { RouteModule } from '../app.js';
import { notFound } from '../errors.js';

const TYPES: Record<string, string> = { '.yml': 'text/yaml; charset=utf-8', '.yaml': 'text/yaml; charset=utf-8', '.json': 'application/json' };

const routes: RouteModule = (app, ctx) => {
  app.get('/updates/:file', { schema: { params: Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._ -]{0,254}$' }) }) } }, async (req, reply) => {
    const dir = ctx.config.updatesDir;
    const file = dir ? path.join(dir, req.params.file) : undefined;
    const st = file ? await fs.promises.stat(file).catch(() => undefined) : undefined;
    if (!file || !st?.isFile() || path.dirname(file) !== dir) throw notFound('update file');
    return reply
      .header('content-type', TYPES[path.extname(file)] ?? 'application/octet-stream')
      .header('content-length', String(st.size))
      .header('cache-control', /^latest/.test(req.params.file) ? 'no-cache' : 'public, max-age=86400')
      .send(fs.createReadStream(file));
  });
};
export default routes;
