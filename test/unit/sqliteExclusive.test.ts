import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeldElsewhereError, holdLockFile } from '../../src/sqlite/exclusive.js';

describe('holdLockFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lock-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses a second holder until the first releases', () => {
    const file = join(dir, 'a.lock');
    const first = holdLockFile(file);
    expect(() => holdLockFile(file, 50)).toThrow(HeldElsewhereError);
    first.release();
    holdLockFile(file, 50).release();
  });

  it('is free again as soon as a holding process is killed with SIGKILL', async () => {
    const file = join(dir, 'b.lock');
    // A child process holds it through the same function, then waits to be killed.
    const module = new URL('../../src/sqlite/exclusive.ts', import.meta.url).href;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
      const { holdLockFile } = await import(${JSON.stringify(module)});
      holdLockFile(${JSON.stringify(file)});
      console.log('held');
      setInterval(() => {}, 1000);
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((ok) => child.stdout.once('data', () => ok()));
    expect(() => holdLockFile(file, 50)).toThrow(HeldElsewhereError);
    const gone = new Promise((ok) => child.once('exit', ok));
    child.kill('SIGKILL');
    await gone;
    holdLockFile(file, 50).release();
  });
});
