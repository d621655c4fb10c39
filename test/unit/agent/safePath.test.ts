// Paths from a Package never lead outside the destination folder.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  childPath,
  entrySegments,
  isInside,
  localSegment,
  numberedName,
  packageFolderName,
  packageRootSegments,
  remoteNameProblem,
  remotePathProblem,
  resolveInside,
  UnsafePathError,
} from '../../../src/agent/engine/safePath.js';

describe('server-given folder paths', () => {
  test.each([
    ['../../evil', 'has a ".." segment'],
    ['a/../../b', 'has a ".." segment'],
    ['a/..', 'has a ".." segment'],
    ['/etc', 'is absolute'],
    ['C:/Windows', 'starts with a drive letter'],
    ['c:relative', 'starts with a drive letter'],
    ['a\\..\\..\\b', 'contains a backslash'],
    ['\\\\server\\share', 'contains a backslash'],
    ['a\0b', 'contains a NUL byte'],
  ])('%j is refused (%s)', (p, why) => {
    expect(remotePathProblem(p)).toBe(why);
    expect(() => entrySegments(p, 'f.txt')).toThrow(UnsafePathError);
  });

  test.each(['', 'a', 'a/b/c', 'a//b/./c/', '...', 'a/..b/c..', 'spaces are fine/ü'])('%j is accepted', (p) => {
    expect(remotePathProblem(p)).toBeUndefined();
  });

  test('empty and "." segments are dropped', () => {
    expect(entrySegments('a//b/./c/', 'f.txt', 'linux')).toEqual(['a', 'b', 'c', 'f.txt']);
    expect(entrySegments('', 'f.txt', 'linux')).toEqual(['f.txt']);
  });
});

describe('server-given names', () => {
  test.each(['', '.', '..', 'a/b', 'a\\b', 'x\0', 'C:evil'])('%j is refused', (n) => {
    expect(remoteNameProblem(n)).toBeDefined();
    expect(() => entrySegments('', n)).toThrow(UnsafePathError);
  });

  test.each(['a.txt', '.hidden', '..double', 'name with spaces', 'ünïcode.bin'])('%j is accepted', (n) => {
    expect(remoteNameProblem(n)).toBeUndefined();
  });
});

describe('local segments', () => {
  test('POSIX keeps everything but separators and NUL', () => {
    expect(localSegment('a:b?c*', 'linux')).toBe('a:b?c*');
  });

  test('Windows loses the characters it cannot hold, trailing dots and device names', () => {
    expect(localSegment('a:b?c*', 'win32')).toBe('a_b_c_');
    expect(localSegment('file.txt:stream', 'win32')).toBe('file.txt_stream');
    expect(localSegment('trailing. ', 'win32')).toBe('trailing__');
    expect(localSegment('CON', 'win32')).toBe('_CON');
    expect(localSegment('nul.txt', 'win32')).toBe('_nul.txt');
  });

  test('a Package name becomes one folder name, never a path', () => {
    expect(packageFolderName('../../etc', 'pkg_1', 'linux')).toBe('.._.._etc');
    expect(packageFolderName('..', 'pkg_1', 'linux')).toBe('pkg_1');
    expect(packageFolderName('  ', 'pkg_1', 'linux')).toBe('pkg_1');
    expect(packageFolderName('a/b\\c', 'pkg_1', 'linux')).toBe('a_b_c');
    expect(packageFolderName('Holiday footage', 'pkg_1', 'linux')).toBe('Holiday footage');
  });
});

describe('resolving inside the destination', () => {
  const root = path.resolve('/tmp/dst');

  test('plain segments stay inside', () => {
    expect(resolveInside(root, ['a', 'b.txt'])).toBe(path.join(root, 'a', 'b.txt'));
  });

  test.each([[['..', 'x']], [['a', '..', '..', 'x']], [['/etc']], [['a/b']], [['']], [['.']], [['x\0']]])('%j is refused', (segs) => {
    expect(() => resolveInside(root, segs)).toThrow(UnsafePathError);
  });

  test('the destination itself is not a file path', () => {
    expect(() => resolveInside(root, [])).toThrow(UnsafePathError);
  });

  test('Windows paths: drive letters and UNC roots do not escape', () => {
    const w = path.win32;
    expect(isInside('C:\\dst', 'C:\\dst\\a\\b', w)).toBe(true);
    expect(isInside('C:\\dst', 'D:\\dst\\a', w)).toBe(false);
    expect(isInside('C:\\dst', 'C:\\dst2\\a', w)).toBe(false);
    expect(() => resolveInside('C:\\dst', ['a\\..\\..\\x'], w)).toThrow(UnsafePathError);
    expect(resolveInside('C:\\dst', ['a', 'b.txt'], w)).toBe('C:\\dst\\a\\b.txt');
  });

  test.each([['..double'], ['...'], ['..double', 'x'], ['...', '..a']])('names that only start with dots stay inside: %j', (...segs) => {
    expect(resolveInside(root, segs)).toBe(path.join(root, ...segs));
    expect(resolveInside('C:\\dst', segs, path.win32)).toBe(path.win32.join('C:\\dst', ...segs));
  });

  test('childPath joins one plain name as resolveInside does, and refuses what resolveInside refuses', () => {
    for (const name of ['b.txt', '..double', '...', 'with space', 'ü.txt']) expect(childPath(root, name)).toBe(resolveInside(root, [name]));
    expect(childPath('/', 'x')).toBe('/x');
    for (const name of ['', '.', '..', 'a/b', 'a\\b', 'x\0', '/etc']) expect(() => childPath(root, name)).toThrow(UnsafePathError);
    // Windows: resolved, so a drive-relative name cannot leave the folder.
    expect(childPath('C:\\dst', 'b.txt', path.win32)).toBe('C:\\dst\\b.txt');
    expect(() => childPath('C:\\dst', '..', path.win32)).toThrow(UnsafePathError);
  });

  test('a sibling folder sharing the prefix is outside', () => {
    expect(isInside('/tmp/dst', '/tmp/dst-other/x')).toBe(false);
    expect(isInside('/tmp/dst', '/tmp/dst/x')).toBe(true);
  });
});

test('numbered names go before the extension; dot files keep their name whole', () => {
  expect(numberedName('a.txt', 0)).toBe('a.txt');
  expect(numberedName('a.txt', 1)).toBe('a (1).txt');
  expect(numberedName('archive.tar.gz', 2)).toBe('archive.tar (2).gz');
  expect(numberedName('.bashrc', 1)).toBe('.bashrc (1)');
  expect(numberedName('README', 3)).toBe('README (3)');
});

describe('packageRootSegments: a Package that is one folder of its name is not wrapped again', () => {
  const f = (p: string, name: string) => ({ kind: 'file', path: p, name });
  const d = (p: string, name: string) => ({ kind: 'directory', path: p, name });
  test('one top folder of the Package\'s name: no Package folder', () => {
    expect(packageRootSegments('bigsend', 'pkg_1', [f('bigsend', 'a'), f('bigsend/sub', 'b'), d('bigsend', 'empty')], 'linux')).toEqual([]);
    expect(packageRootSegments('bigsend', 'pkg_1', [d('', 'bigsend')], 'linux')).toEqual([]);
    expect(packageRootSegments(' bigsend ', 'pkg_1', [f('bigsend/', 'a')], 'linux')).toEqual([]);
  });
  test('a folder of another name, two top folders, or a loose file: the Package folder', () => {
    expect(packageRootSegments('Reel', 'pkg_1', [f('bigsend', 'a')], 'linux')).toEqual(['Reel']);
    expect(packageRootSegments('Bigsend', 'pkg_1', [f('bigsend', 'a')], 'linux')).toEqual(['Bigsend']);
    expect(packageRootSegments('bigsend', 'pkg_1', [f('bigsend', 'a'), f('other', 'b')], 'linux')).toEqual(['bigsend']);
    expect(packageRootSegments('bigsend', 'pkg_1', [f('bigsend', 'a'), f('', 'notes.txt')], 'linux')).toEqual(['bigsend']);
    expect(packageRootSegments('bigsend', 'pkg_1', [f('', 'bigsend')], 'linux')).toEqual(['bigsend']);
    expect(packageRootSegments('Loose', 'pkg_1', [f('', 'a'), f('', 'b')], 'linux')).toEqual(['Loose']);
    expect(packageRootSegments('Empty', 'pkg_1', [], 'linux')).toEqual(['Empty']);
  });
  test('names compare as they land on disk', () => {
    expect(packageRootSegments('a:b', 'pkg_1', [f('a:b', 'x')], 'win32')).toEqual([]);
  });
});
