// The store's ids (upload ids, data directories, temp files) come from a pool of
// random bytes: across refills they stay well-formed and never repeat.
import { expect, test } from 'vitest';
import { isId, newId } from '../../src/objectstore/disk.js';

test('newId gives distinct 32-hex-digit ids across several refills of its pool', () => {
  const ids = Array.from({ length: 1000 }, () => newId()); // 4 KiB holds 256 ids
  expect(ids.every(isId)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});
