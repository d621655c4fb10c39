// Registered paths and names, and the names they get in the Windows ZIP.
import { describe, expect, it } from 'vitest';
import { isMacNoise, nameProblem, normalizePath, pathProblem, windowsNames, windowsSegment } from '../../src/hosted/services/relpath.js';

describe('registered paths', () => {
  it('accepts relative paths and normalizes empty and "." segments', () => {
    for (const p of ['', 'a', 'a/b c/d', 'a//b/', './a', 'ab:c']) expect(pathProblem(p), p).toBeUndefined();
    expect(normalizePath('a//b/./c/')).toBe('a/b/c');
    expect(normalizePath('./')).toBe('');
  });

  it('refuses parent segments, absolute paths, drive letters, backslashes and NUL', () => {
    for (const p of ['..', 'a/../b', '../a', '/a', 'C:', 'c:/x', 'a\\b', 'a\0b', 'x/' + 'y'.repeat(256)]) {
      expect(pathProblem(p), p).toBeDefined();
    }
  });

  it('refuses names with separators, NUL, "." and ".."', () => {
    for (const n of ['', '.', '..', 'a/b', 'a\\b', 'a\0']) expect(nameProblem(n), n).toBeDefined();
    for (const n of ['a', '.hidden', 'x..y', 'Ünïcode ☕']) expect(nameProblem(n), n).toBeUndefined();
  });
});

describe('ZIP names', () => {
  it('makes segments valid on Windows', () => {
    expect(windowsSegment('a<b>c:d"e|f?g*h')).toBe('a_b_c_d_e_f_g_h');
    expect(windowsSegment('tab\there')).toBe('tab_here');
    expect(windowsSegment('dots...')).toBe('dots___');
    expect(windowsSegment('space ')).toBe('space_');
    expect(windowsSegment('nul')).toBe('_nul');
    expect(windowsSegment('COM1.txt')).toBe('_COM1.txt');
    expect(windowsSegment('console.txt')).toBe('console.txt');
  });

  it('keeps Windows names distinct ignoring case', () => {
    expect(windowsNames(['a/X.txt', 'a/x.txt', 'a/x?.txt', 'a/x_.txt', 'noext', 'NOEXT'])).toEqual([
      'a/X.txt', 'a/x (2).txt', 'a/x_.txt', 'a/x_ (2).txt', 'noext', 'NOEXT (2)',
    ]);
  });

  it('keeps them distinct across many names, the table of names grown many times over', () => {
    // 20,000 names, then each again in capitals: every second one gets " (2)", every third " (3)".
    const rels = Array.from({ length: 20_000 }, (_, i) => `d${i % 50}/clip ${i}.mov`);
    const names = windowsNames([...rels, ...rels.map((r) => r.toUpperCase()), ...rels]);
    expect(names.slice(0, 20_000)).toEqual(rels);
    expect(names.slice(20_000, 40_000)).toEqual(rels.map((r) => r.toUpperCase().replace(/\.MOV$/, ' (2).MOV')));
    expect(names.slice(40_000)).toEqual(rels.map((r) => r.replace(/\.mov$/, ' (3).mov')));
  });

  it('spots Finder noise', () => {
    expect(isMacNoise('.DS_Store')).toBe(true);
    expect(isMacNoise('a/b/.DS_Store')).toBe(true);
    expect(isMacNoise('__MACOSX/a/._b')).toBe(true);
    expect(isMacNoise('a/__MACOSX')).toBe(true);
    expect(isMacNoise('a/.DS_Store.txt')).toBe(false);
    expect(isMacNoise('a/MACOSX/b')).toBe(false);
  });
});
