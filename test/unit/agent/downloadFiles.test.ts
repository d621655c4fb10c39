// A download's names on disk: reservePart picks a name no file holds, and in a
// folder the run made itself skips that look; either way publishPart never
// replaces a file, one that appeared after the name was picked included.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { publishPart, reservePart } from '../../../src/agent/engine/downloadFiles.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-dlfiles-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function receive(fresh: boolean) {
  const names: string[] = [];
  const { localName, fh } = await reservePart(dir, 'take.mov', (n) => void names.push(n), fresh);
  await fh.write('ours');
  await fh.close();
  return { localName, names };
}

test('in a folder that was there, a name a file holds is passed over before anything is written', async () => {
  await fs.writeFile(path.join(dir, 'take.mov'), 'theirs');
  const { localName, names } = await receive(false);
  expect(localName).toBe('take (1).mov');
  expect(names).toEqual(['take (1).mov']);
  expect(await publishPart(dir, localName, 'take.mov', (n) => names.push(n))).toBe('take (1).mov');
  expect(await fs.readFile(path.join(dir, 'take.mov'), 'utf8')).toBe('theirs');
  expect(await fs.readFile(path.join(dir, 'take (1).mov'), 'utf8')).toBe('ours');
});

test('in a folder the run made, a file that appears under the name is not replaced: the publish takes the next name and records it', async () => {
  const { localName, names } = await receive(true);
  expect(localName).toBe('take.mov');
  // Another program writes the same name while the download's partial file fills.
  await fs.writeFile(path.join(dir, 'take.mov'), 'theirs');
  const used = await publishPart(dir, localName, 'take.mov', (n) => names.push(n));
  expect(used).toBe('take (1).mov');
  expect(names).toEqual(['take.mov', 'take (1).mov']);
  expect(await fs.readFile(path.join(dir, 'take.mov'), 'utf8')).toBe('theirs');
  expect(await fs.readFile(path.join(dir, 'take (1).mov'), 'utf8')).toBe('ours');
  expect((await fs.readdir(dir)).sort()).toEqual(['take (1).mov', 'take.mov']);
});
