// The pure parts of cloud connections: sealing credentials, the authorization
// checks and merges, where objects go in a bucket, part sizes, the manifest's key and its streamed text.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSealer } from '../../../src/hosted/auth/sealed.js';
import { checkAuthorization, deliveryOf, maskAuthorization, mergeAuthorization } from '../../../src/hosted/services/cloudAuthorization.js';
import { joinKey, packageFolder, partSizeFor } from '../../../src/hosted/cloud/toS3.js';
import { manifestKey, manifestText, type Manifest } from '../../../src/hosted/cloud/manifest.js';
import type { Item } from '../../../src/hosted/cloud/progress.js';
import { signingRegion } from '../../../src/hosted/cloud/s3Target.js';
import { HttpError } from '../../../src/hosted/errors.js';

const MiB = 1024 * 1024;
const S3 = { client_id: 'AK', client_secret: 'SK', destination: 'bucket-1', endpoint: 'https://s3.example.test', region: 'default' };

describe('sealing', () => {
  it('opens what it sealed, and nothing sealed under another key or altered', () => {
    const key = randomBytes(32);
    const s = createSealer(key);
    const sealed = s.seal('{"client_secret":"SK"}');
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain('SK');
    expect(s.seal('same')).not.toBe(s.seal('same'));
    expect(s.open(sealed)).toBe('{"client_secret":"SK"}');
    expect(() => createSealer(randomBytes(32)).open(sealed)).toThrow();
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(() => s.open(`v1:${raw.toString('base64')}`)).toThrow();
    expect(() => createSealer(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('authorization', () => {
  it('keeps only the fields of the variant, and masks secrets in answers', () => {
    const { variant, auth } = checkAuthorization('generic_s3', { ...S3, stray: 'dropped' });
    expect(variant).toBe('s3_compatible_key');
    expect(auth).toEqual(S3);
    expect(maskAuthorization(auth)).toEqual({ ...S3, client_secret: '********' });
  });

  it('merges an update field by field; the mask keeps a secret; a complete other variant replaces', () => {
    expect(mergeAuthorization('generic_s3', S3, { region: 'eu-1', client_secret: '********' }).auth).toEqual({ ...S3, region: 'eu-1' });
    const key = { client_id: 'AK', client_secret: 'SK', destination: 'bucket-1', region: 'eu-west-1', storage_class: 'STANDARD' };
    const role = { role_arn: 'arn:aws:iam::123456789012:role/r', external_id: 'ext-1', destination: 'bucket-2', region: 'eu-west-1', storage_class: 'STANDARD' };
    expect(mergeAuthorization('amazon_s3', key, role)).toEqual({ variant: 'aws_s3_role', auth: role });
    expect(() => mergeAuthorization('amazon_s3', key, { role_arn: role.role_arn })).toThrow(HttpError);
  });

  it('says what works in this version', () => {
    expect(deliveryOf('generic_s3', 's3_compatible_key')).toEqual({ kind: 's3' });
    expect(deliveryOf('amazon_s3', 'aws_s3_key')).toEqual({ kind: 's3' });
    expect(deliveryOf('storage_gateway', 'storage_gateway')).toEqual({ kind: 'gateway' });
    expect(deliveryOf('amazon_s3', 'aws_s3_role')).toMatchObject({ kind: 'unavailable' });
    expect(deliveryOf('box', 'enterprise_key_pair')).toMatchObject({ kind: 'unavailable', reason: expect.stringContaining('Box (box)') });
  });

  it('signs "default" as the provider\'s own default region', () => {
    expect(signingRegion('generic_s3', 'default')).toBe('us-east-1');
    expect(signingRegion('cloudflare_r2_s3', 'default')).toBe('auto');
    expect(signingRegion('wasabi_s3', 'eu-central-2')).toBe('eu-central-2');
  });
});

describe('keys in the bucket', () => {
  it('a Package folder is its name made one safe segment, with its id', () => {
    expect(packageFolder({ id: 'pkg_1', name: 'Day 1: rushes/selects' })).toBe('Day 1_ rushes_selects (pkg_1)');
    expect(packageFolder({ id: 'pkg_2', name: '..' })).toBe('_ (pkg_2)');
    expect(packageFolder({ id: 'pkg_3', name: '   ' })).toBe('package (pkg_3)');
    expect(packageFolder({ id: 'pkg_4', name: 'x'.repeat(300) })).toBe(`${'x'.repeat(200)} (pkg_4)`);
    expect(joinKey('', 'a (pkg)', '', 'n.bin')).toBe('a (pkg)/n.bin');
  });

  it('part sizes stay within S3 limits: at least the configured size, 10,000 parts at most', () => {
    expect(partSizeFor(40 * MiB, 8 * MiB)).toBe(8 * MiB);
    expect(partSizeFor(1024 * 1024 * MiB, 8 * MiB)).toBe(105 * MiB);
    expect(Math.ceil((1024 * 1024 * MiB) / partSizeFor(1024 * 1024 * MiB, 8 * MiB))).toBeLessThanOrEqual(10_000);
    expect(partSizeFor(10 * MiB, 1)).toBe(5 * MiB);
  });

  it('the manifest keeps its name unless a delivered file has it', async () => {
    const keys = (...delivered: string[]) => async (key: string) => delivered.includes(key);
    expect(await manifestKey('in/p (x)', 'xfr_1', keys('in/p (x)/a'))).toBe('in/p (x)/ferry-transfer-manifest.json');
    expect(await manifestKey('in/p (x)', 'xfr_1', keys('in/p (x)/ferry-transfer-manifest.json'))).toBe('in/p (x)/ferry-transfer-manifest-xfr_1.json');
    expect(await manifestKey('', 'xfr_1', keys('in/a'))).toBe('ferry-transfer-manifest.json');
  });
});

describe('the manifest streamed', () => {
  const head: Omit<Manifest, 'files'> = {
    manifest_version: 1,
    transfer_id: 'xfr_1',
    cloud_connection_id: 'cc_1',
    package: { id: 'pkg_1', name: 'Day "1"', sender: 's@example.com', portal_id: null, size: 3, total_files: 3, finalized_at: null },
    bucket: 'b',
    folder: 'in/p',
    completed_at: '2026-01-02T03:04:05.000Z',
    files_filtered_out: 0,
  };
  const item = (n: number): Item => ({
    transfer_id: 'xfr_1', seq: n, file_id: `file_${n}`, source_key: `k${n}`, dest_key: n === 2 ? null : `in/p/f${n}\n`, path: 'a', name: `f${n}é`, size: n,
    last_modified: '2025-01-01T00:00:00.000Z', state: 'complete', upload_id: null, part_size: null, etag: n === 3 ? '"e3"' : null,
  });
  const text = async (pages: Item[][]) => {
    let out = '';
    for await (const piece of manifestText(head, async function* () { yield* pages; })) out += piece;
    return out;
  };
  const whole = (items: Item[]) =>
    `${JSON.stringify({ ...head, files: items.map((i) => ({ path: i.path, name: i.name, key: i.dest_key ?? '', size: i.size, last_modified: i.last_modified, etag: i.etag })) }, null, 2)}\n`;

  it('is the text JSON.stringify makes of the whole manifest, whatever the pages', async () => {
    expect(await text([])).toBe(whole([]));
    expect(await text([[item(1)]])).toBe(whole([item(1)]));
    expect(await text([[item(1), item(2)], [], [item(3)]])).toBe(whole([item(1), item(2), item(3)]));
  });
});
