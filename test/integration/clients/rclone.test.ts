// The embedded store driven by rclone (Debian's package): an S3 client nobody
// here wrote, doing multipart uploads, listings, ranged reads and checksums.
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startObjectStore, type RunningObjectStore } from '../../../src/objectstore/index.js';
import { onlyIf } from '../../helpers/skip.js';

const run = promisify(execFile);
const hasRclone = (() => {
  try {
    execFileSync('rclone', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    console.warn('rclone is not installed (apt-get install rclone): skipping the rclone compatibility tests');
    return false;
  }
})();

const creds = { accessKey: 'RCLONETESTKEY', secretKey: 'rclone-test-secret-key' };
let tmp: string;
let store: RunningObjectStore;
let env: NodeJS.ProcessEnv;

const rclone = (...args: string[]) => run('rclone', args, { env, maxBuffer: 16 * 1024 * 1024 });
const sha = async (file: string) => createHash('sha256').update(await fs.readFile(file)).digest('hex');

describe('rclone against the embedded store', onlyIf(hasRclone, 'rclone is not installed (apt-get install rclone)'), () => {
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-'));
    store = await startObjectStore({ host: '127.0.0.1', port: 0, dataDir: path.join(tmp, 'store'), ...creds, buckets: ['media'] });
    const { AWS_CA_BUNDLE: _ignored, ...rest } = process.env;
    env = {
      ...rest,
      RCLONE_CONFIG: path.join(tmp, 'rclone.conf'),
      RCLONE_CONFIG_FERRY_TYPE: 's3',
      RCLONE_CONFIG_FERRY_PROVIDER: 'Other',
      RCLONE_CONFIG_FERRY_ENDPOINT: store.url,
      RCLONE_CONFIG_FERRY_ACCESS_KEY_ID: creds.accessKey,
      RCLONE_CONFIG_FERRY_SECRET_ACCESS_KEY: creds.secretKey,
      RCLONE_CONFIG_FERRY_FORCE_PATH_STYLE: 'true',
      RCLONE_CONFIG_FERRY_REGION: 'us-east-1',
    };
    const src = path.join(tmp, 'src');
    await fs.mkdir(path.join(src, 'reel 1', 'takes'), { recursive: true });
    await fs.writeFile(path.join(src, 'reel 1', 'takes', 'big.mov'), randomBytes(17 * 1024 * 1024 + 3));
    await fs.writeFile(path.join(src, 'reel 1', 'notes é.txt'), 'scene 4, take 2');
    await fs.writeFile(path.join(src, 'empty.bin'), '');
  });

  afterAll(async () => {
    await store?.close();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  test('copies a tree up in 5 MiB multipart chunks, lists it, and copies it back byte-identical', async () => {
    const src = path.join(tmp, 'src');
    await rclone('copy', src, 'ferry:media/project', '--s3-chunk-size', '5M', '--s3-upload-cutoff', '5M', '--transfers', '4');
    const { stdout } = await rclone('lsf', '-R', '--files-only', 'ferry:media/project');
    expect(stdout.trim().split('\n').sort()).toEqual(['empty.bin', 'reel 1/notes é.txt', 'reel 1/takes/big.mov']);
    // rclone compares sizes and the MD5 it recorded (multipart ETags are "md5-N") on the way up.
    await rclone('check', src, 'ferry:media/project', '--one-way');

    const back = path.join(tmp, 'back');
    await rclone('copy', 'ferry:media/project', back, '--multi-thread-streams', '4', '--multi-thread-cutoff', '5M');
    for (const rel of ['reel 1/takes/big.mov', 'reel 1/notes é.txt', 'empty.bin']) {
      expect(await sha(path.join(back, rel))).toBe(await sha(path.join(src, rel)));
    }
  });

  test('a wrong secret is refused', async () => {
    const bad = { ...env, RCLONE_CONFIG_FERRY_SECRET_ACCESS_KEY: 'not-the-secret' };
    await expect(run('rclone', ['lsf', 'ferry:media', '--retries', '1', '--low-level-retries', '1'], { env: bad })).rejects.toThrow(/SignatureDoesNotMatch|403/);
  });
});
