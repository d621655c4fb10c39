// The README's curl walk-through (docs/walkthrough.sh) run for real with curl
// against a started service: if the README's steps break, this fails.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { repoRoot } from '../../helpers/cli.js';

let svc: TestService;
let work: string;

beforeAll(async () => {
  svc = await startTestService();
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-walkthrough-'));
});
afterAll(async () => {
  await svc?.close();
  await fs.rm(work, { recursive: true, force: true });
});

test('the README walk-through uploads in chunks through blueprints and downloads identical bytes through a Link', async () => {
  const { stdout } = await promisify(execFile)('bash', [path.join(repoRoot, 'docs/walkthrough.sh')], {
    env: { ...process.env, FERRY: svc.url, EMAIL: svc.owner.email, PASSWORD: svc.owner.password, SIZE_MB: '12', CHUNK_MB: '5', WORK: work },
  });
  expect(stdout).toMatch(/Link: http:\/\/127\.0\.0\.1:\d+\/l\/\S+\?secret=\S+/);
  expect(stdout.trim().split('\n').at(-1)).toBe('identical');
  const [a, b] = await Promise.all([fs.readFile(path.join(work, 'big.bin')), fs.readFile(path.join(work, 'downloaded.bin'))]);
  expect(a.length).toBe(12 * 1024 * 1024);
  expect(b.equals(a)).toBe(true);
  // 12 MiB in 5 MiB chunks: three parts were uploaded.
  expect((await fs.readdir(work)).filter((f) => f.startsWith('part.'))).toHaveLength(3);
});
