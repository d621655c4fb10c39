// Walking the paths of an upload into Package entries.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { walkPaths, WalkError } from '../../../src/agent/engine/walk.js';

let tmp: string;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-walk-'));
  const put = async (rel: string, data = 'x') => {
    await fs.mkdir(path.dirname(path.join(tmp, rel)), { recursive: true });
    await fs.writeFile(path.join(tmp, rel), data);
  };
  await put('album/a.jpg', 'aaaa');
  await put('album/sub/b.jpg', 'bb');
  await put('album/sub/deeper/empty.txt', '');
  await put('album/.DS_Store');
  await put('album/sub/Thumbs.db');
  await put('album/desktop.ini');
  await put('album/only-clutter/.ds_store');
  await fs.mkdir(path.join(tmp, 'album/void'));
  await put('loose.txt', 'loose');
  await put('other/album/a.jpg');
  await fs.mkdir(path.join(tmp, 'loop'));
  await fs.symlink(path.join(tmp, 'loop'), path.join(tmp, 'loop/again'));
  await put('bad\\name/x.txt');
  await put('disguised/invoice\u202Egnp.exe');
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const places = (es: Awaited<ReturnType<typeof walkPaths>>) =>
  es.map((e) => `${e.kind}:${e.relDir ? `${e.relDir}/` : ''}${e.name}:${e.size}`).sort();

describe('walkPaths', () => {
  test('a folder keeps its name and the relative paths under it; clutter is left out; empty files and folders are kept', async () => {
    const es = await walkPaths([path.join(tmp, 'album')]);
    expect(places(es)).toEqual([
      'directory:album/only-clutter:0',
      'directory:album/void:0',
      'file:album/a.jpg:4',
      'file:album/sub/b.jpg:2',
      'file:album/sub/deeper/empty.txt:0',
    ]);
    const a = es.find((e) => e.name === 'a.jpg')!;
    expect(a.localPath).toBe(path.join(tmp, 'album/a.jpg'));
    expect(a.mtimeMs).toBeGreaterThan(0);
  });

  test('a file goes to the Package root; several paths add up', async () => {
    const es = await walkPaths([path.join(tmp, 'loose.txt'), path.join(tmp, 'album/sub')]);
    expect(places(es)).toEqual(['file:loose.txt:5', 'file:sub/b.jpg:2', 'file:sub/deeper/empty.txt:0']);
  });

  test('a folder of more files than are stat\'ed at once: each gets its own size, in the folder\'s order, a subfolder in its place', async () => {
    const many = path.join(tmp, 'many');
    await fs.mkdir(path.join(many, 'f050-sub'), { recursive: true });
    await fs.writeFile(path.join(many, 'f050-sub', 'inner.bin'), 'inner');
    for (let i = 0; i < 100; i++) await fs.writeFile(path.join(many, `f${String(i).padStart(3, '0')}.bin`), Buffer.alloc(i));
    const es = await walkPaths([many]);
    const expected = Array.from({ length: 100 }, (_, i) => `many/f${String(i).padStart(3, '0')}.bin:${i}`);
    expected.splice(50, 0, 'many/f050-sub/inner.bin:5');
    expect(es.map((e) => `${e.relDir}/${e.name}:${e.size}`)).toEqual(expected);
  });

  test('an empty folder given alone is one directory entry', async () => {
    expect(places(await walkPaths([path.join(tmp, 'album/void')]))).toEqual(['directory:void:0']);
  });

  test('a symlink loop is entered once', async () => {
    const es = await walkPaths([path.join(tmp, 'loop')]);
    expect(places(es)).toEqual(['directory:loop:0']);
  });

  test.each([
    ['a relative path', () => ['album']],
    ['a missing path', () => [path.join(tmp, 'nope')]],
    ['two entries at one place', () => [path.join(tmp, 'album'), path.join(tmp, 'other/album')]],
    ['the same path twice', () => [path.join(tmp, 'loose.txt'), path.join(tmp, 'loose.txt')]],
    ['a name the service refuses', () => [path.join(tmp, 'bad\\name')]],
    ['a name with a bidirectional override', () => [path.join(tmp, 'disguised')]],
  ])('refuses %s with a WalkError', async (_what, paths) => {
    await expect(walkPaths(paths())).rejects.toBeInstanceOf(WalkError);
  });

  test('refuses more entries than allowed', async () => {
    await expect(walkPaths([path.join(tmp, 'album')], { maxEntries: 2 })).rejects.toThrow(/more than 2 entries/);
  });
});
