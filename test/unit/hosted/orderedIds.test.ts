import { describe, expect, it } from 'vitest';
import { newId, newOrderedId } from '../../../src/hosted/ids.js';

describe('newOrderedId', () => {
  it('has the shape of newId: the prefix, an underscore and 20 base62 characters', () => {
    expect(newOrderedId('file')).toMatch(/^file_[0-9a-zA-Z]{20}$/);
    expect(newOrderedId('file').length).toBe(newId('file').length);
  });

  it('sorts as text in the order of its creation time', () => {
    const times = [0, 9, 10, 35, 36, 61, 62, 3843, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 62 ** 8 - 1];
    const ids = times.map((t) => newOrderedId('file', t));
    expect([...ids].sort()).toEqual(ids);
    // The same millisecond shares its first 8 characters and differs after them.
    const a = newOrderedId('file', 1_700_000_000_000);
    expect(a.slice(0, 13)).toBe(ids[8]!.slice(0, 13));
    expect(a).not.toBe(ids[8]);
  });

  it('ids made one after another never sort before an earlier one', () => {
    const ids = Array.from({ length: 2000 }, () => newOrderedId('file'));
    for (let i = 1; i < ids.length; i++) expect(ids[i]!.slice(0, 13) >= ids[i - 1]!.slice(0, 13)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
