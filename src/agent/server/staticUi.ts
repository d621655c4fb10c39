// Browser mode (`ferry agent --ui`): the app's built renderer (dist/renderer)
// served at the agent's own address, under the agent's Host and Origin checks,
// with a strict Content-Security-Policy. The requests it makes go through the
// browser transport (ui.ts).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import type { AgentApp } from './app.js';
import { AgentErrorCode } from '../../api/agent/errors.js';

export const CSP = "default-src 'self'; connect-src 'self' ws: wss:; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** Where the built renderer is: FERRY_RENDERER_DIR, beside the bundled CLI (dist/), or the checkout's dist/renderer. */
export function rendererDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // dist/ferry.mjs, dist/chunks/*.mjs, or src/agent/server/ in a checkout.
  const candidates = [env.FERRY_RENDERER_DIR, path.join(here, 'renderer'), path.resolve(here, '..', 'renderer'), path.resolve(here, '..', '..', '..', 'dist', 'renderer')];
  return candidates.find((d) => d !== undefined && fs.existsSync(path.join(d, 'index.html')));
}

export function serveUi(app: AgentApp, dir: string): void {
  const root = path.resolve(dir);
  const send = (file: string, reply: FastifyReply, immutable: boolean) => {
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    return reply
      .header('content-type', type)
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .send(fs.createReadStream(file));
  };
  app.get('/', (_req, reply) => send(path.join(root, 'index.html'), reply, false));
  app.get('/assets/*', (req, reply) => {
    const rel = (req.params as { '*': string })['*'];
    const file = path.resolve(root, 'assets', rel);
    // Paths from the network never leave the folder.
    if (!file.startsWith(path.join(root, 'assets') + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      return reply.code(404).send({ code: AgentErrorCode.notFound, message: 'no such file' });
    }
    return send(file, reply, true);
  });
}
