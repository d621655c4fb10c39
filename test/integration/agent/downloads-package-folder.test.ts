// The Package folder of a download (create_package_folder, on by default): a
// Package that is one top folder of its own name is not wrapped again (no
// dst/bigsend/bigsend); a top folder of another name, or loose files, are put in
// a folder named after the Package. See docs/agent-api-notes/downloads.md.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { createPackage, finalizePackage, makeLink, uploadFile } from '../../helpers/flow.js';
import { startDownload, treeOf, waitForState } from '../../helpers/downloads.js';

let svc: TestService;
let owner: Actor;
let a: TestAgent;
let tmp: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await ownerActor(svc);
  a = await startTestAgent(svc);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-pkg-folder-'));
}, 120_000);
afterAll(async () => {
  await a?.close();
  await svc?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

/** A finalized Package of `files` (path, name, text), and its Link. */
async function sent(name: string, files: [string, string, string][]) {
  const pkg = await createPackage(svc, owner, { name });
  const ids: string[] = [];
  for (const [p, n, text] of files) ids.push(await uploadFile(svc, pkg, n, p, Buffer.from(text)));
  await finalizePackage(svc, pkg);
  return { link: await makeLink(svc, pkg), ids };
}

/** Downloads the Link into a new folder `dst` (with the Package folder, the default) and answers the tree there. */
async function received(url: string, dst: string, extra: Record<string, unknown> = {}) {
  const to = path.join(tmp, dst);
  const id = await startDownload(a.url, { url, dst_folder: to, ...extra });
  const record = await waitForState(a.url, id);
  const files = [...(await treeOf(to))].filter(([, v]) => v !== 'dir').map(([k]) => k);
  return { tree: files.sort(), record, to };
}

describe('the Package folder', () => {
  test('a Package holding one top folder of its own name lands once: dst/bigsend, not dst/bigsend/bigsend', async () => {
    const { link } = await sent('bigsend', [['bigsend', 'a.txt', 'a\n'], ['bigsend/sub', 'b.txt', 'b\n']]);
    const { tree, record, to } = await received(link.url, 'double');
    expect(tree).toEqual(['bigsend/a.txt', 'bigsend/sub/b.txt']);
    const item = record.items.find((i: any) => i.path === 'bigsend/a.txt');
    expect(item.local_path).toBe(path.join(to, 'bigsend', 'a.txt'));
  });

  test('a selection of such a Package lands where the whole would', async () => {
    const { link, ids } = await sent('bigsend', [['bigsend', 'a.txt', 'a\n'], ['bigsend/sub', 'b.txt', 'b\n']]);
    const { tree } = await received(link.url, 'double-selected', { file_ids: [ids[1]] });
    expect(tree).toEqual(['bigsend/sub/b.txt']);
  });

  test('a top folder whose name differs from the Package\'s is put in the Package folder', async () => {
    const { link } = await sent('Reel for Ana', [['bigsend', 'a.txt', 'a\n'], ['bigsend/sub', 'b.txt', 'b\n']]);
    expect((await received(link.url, 'differs')).tree).toEqual(['Reel for Ana/bigsend/a.txt', 'Reel for Ana/bigsend/sub/b.txt']);
  });

  test('a Package of loose files is put in the Package folder', async () => {
    const { link } = await sent('Loose', [['', 'a.txt', 'a\n'], ['', 'b.txt', 'b\n']]);
    expect((await received(link.url, 'loose')).tree).toEqual(['Loose/a.txt', 'Loose/b.txt']);
  });

  test('a folder of the Package\'s name beside a loose file is put in the Package folder', async () => {
    const { link } = await sent('bigsend', [['bigsend', 'a.txt', 'a\n'], ['', 'notes.txt', 'n\n']]);
    expect((await received(link.url, 'mixed')).tree).toEqual(['bigsend/bigsend/a.txt', 'bigsend/notes.txt']);
  });

  test('without create_package_folder the tree lands in dst_folder as it is', async () => {
    const { link } = await sent('bigsend', [['bigsend', 'a.txt', 'a\n']]);
    expect((await received(link.url, 'no-folder', { create_package_folder: false })).tree).toEqual(['bigsend/a.txt']);
  });
});
