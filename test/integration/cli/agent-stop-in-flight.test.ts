// SIGTERM stops `ferry agent` even while requests are in flight: one waiting on a
// service that accepts the connection and never answers, and one that names a
// destination under /proc (once a loop that never ended, see
// docs/agent-api-notes/paths.md). The process exits 0; the test's timeout is the bound.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { jsonLine, startFerry, type Running } from '../../helpers/cli.js';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let svc: TestService;
let root: string;
let linkUrl: string;
/** Accepts connections and never answers: a request to it stays in flight. */
let silent: net.Server;
const sockets = new Set<net.Socket>();
const running: Running[] = [];

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-stop-in-flight-'));
  svc = await startTestService();
  const owner = await ownerActor(svc);
  const pkg = await createPackage(svc, owner, { name: 'In flight' });
  await uploadFile(svc, pkg, 'a.txt', '', Buffer.from('a\n'));
  await finalizePackage(svc, pkg);
  linkUrl = (await makeLink(svc, pkg)).url;
  silent = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await Promise.all(running.map((r) => r.stop('SIGKILL')));
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent?.close(r));
  await svc?.close();
  await fs.rm(root, { recursive: true, force: true });
});

async function startAgent(dir: string): Promise<{ agent: Running; url: string }> {
  const agent = startFerry(['agent', '--listen', '127.0.0.1:0', '--config-dir', path.join(root, dir), '--hosted-url', svc.url]);
  running.push(agent);
  const line = jsonLine(await agent.waitFor((l) => jsonLine(l)?.msg === 'ferry agent ready', 'ready line'))!;
  return { agent, url: line.url as string };
}

/** Sends POST /downloads and reports whether it was answered; it is never awaited to its end. */
function postDownload(url: string, body: Record<string, unknown>): { answered: () => boolean } {
  let answered = false;
  void fetch(`${url}/downloads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    .then(() => (answered = true))
    .catch(() => undefined);
  return { answered: () => answered };
}

describe('SIGTERM with a request in flight', () => {
  test('a request waiting on a silent service: the agent exits 0', async () => {
    const { agent, url } = await startAgent('silent');
    const port = (silent.address() as net.AddressInfo).port;
    const before = sockets.size;
    const req = postDownload(url, { url: `http://127.0.0.1:${port}/l/lnk_silent?secret=s`, dst_folder: path.join(root, 'dst-silent') });
    // In flight: the agent has connected to the silent service.
    await expect.poll(() => sockets.size > before, { timeout: 30_000 }).toBe(true);
    expect(req.answered()).toBe(false);
    expect(await agent.stop('SIGTERM')).toBe(0);
  });

  test('a request naming /proc/forbidden: the agent exits 0', async () => {
    const { agent, url } = await startAgent('proc');
    postDownload(url, { url: linkUrl, dst_folder: '/proc/forbidden' });
    // Whether it is answered by now or still in flight, SIGTERM ends the process.
    await new Promise((r) => setTimeout(r, 1000));
    expect(await agent.stop('SIGTERM')).toBe(0);
  });
});
