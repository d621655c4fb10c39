// A watch folder's blacklist globs: names at any depth, paths from the top,
// folders leaving out what they hold, shell-like classes and braces, case as
// the platform's file systems treat it.
import { describe, expect, it } from 'vitest';
import { blacklistMatcher, globProblem } from '../../../src/agent/automations/glob.js';

const m = (globs: string[], platform: NodeJS.Platform = 'linux') => blacklistMatcher(globs, platform);

describe('blacklistMatcher', () => {
  it('matches a name without / at any depth, and what a matching folder holds', () => {
    const bl = m(['*.tmp', '.git', 'Thumbs?.db']);
    expect(bl('a.tmp')).toBe(true);
    expect(bl('Day1/cam/b.tmp')).toBe(true);
    expect(bl('Day1/b.tmp.mov')).toBe(false);
    expect(bl('proj/.git/config')).toBe(true);
    expect(bl('proj/.gitignore')).toBe(false);
    expect(bl('x/Thumbs1.db')).toBe(true);
    expect(bl('x/Thumbs12.db')).toBe(false);
  });

  it('matches a pattern with / against the path from the top; ** spans folders, * does not', () => {
    const bl = m(['Day1/renders/*.exr', '**/cache/**', '/top.txt']);
    expect(bl('Day1/renders/f001.exr')).toBe(true);
    expect(bl('Day1/renders/deep/f001.exr')).toBe(false);
    expect(bl('Day2/renders/f001.exr')).toBe(false);
    expect(bl('a/b/cache/x.bin')).toBe(true);
    expect(bl('cache/x.bin')).toBe(true);
    expect(bl('a/cachet/x.bin')).toBe(false);
    expect(bl('top.txt')).toBe(true);
    expect(bl('sub/top.txt')).toBe(false);
  });

  it('takes [classes], [!negations], {a,b} braces and escapes; regex characters are literal', () => {
    const bl = m(['take[0-9].mov', 'v[!0-9].txt', '*.{log,bak}', 'a+b(1).txt', 'star\\*.txt']);
    expect(bl('take3.mov')).toBe(true);
    expect(bl('takeX.mov')).toBe(false);
    expect(bl('vx.txt')).toBe(true);
    expect(bl('v1.txt')).toBe(false);
    expect(bl('run.log')).toBe(true);
    expect(bl('old.bak')).toBe(true);
    expect(bl('old.bak2')).toBe(false);
    expect(bl('a+b(1).txt')).toBe(true);
    expect(bl('aab(1).txt')).toBe(false);
    expect(bl('star*.txt')).toBe(true);
    expect(bl('starx.txt')).toBe(false);
  });

  it('ignores case on Windows and macOS only; no globs match nothing', () => {
    expect(m(['*.TMP'], 'linux')('a.tmp')).toBe(false);
    expect(m(['*.TMP'], 'darwin')('a.tmp')).toBe(true);
    expect(m(['*.TMP'], 'win32')('a.tmp')).toBe(true);
    expect(m([])('anything')).toBe(false);
  });

  it('globProblem names patterns that cannot be compiled', () => {
    expect(globProblem('*.tmp')).toBeUndefined();
    expect(globProblem('[z-a]')).toEqual(expect.any(String));
  });
});
