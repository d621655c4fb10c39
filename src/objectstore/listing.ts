// ListObjects paging over the sorted key index: prefix, delimiter roll-up into
// CommonPrefixes, max-keys, and resume after a key or a common prefix.

import { compareKeys, type BucketIndex, type Entry } from './catalog.js';

export interface ListParams {
  prefix: string;
  delimiter: string;
  maxKeys: number;
  /** Resume strictly after this key or common prefix (start-after / token / marker). */
  after: string | undefined;
}

export interface ListPage {
  contents: Array<[string, Entry]>;
  prefixes: string[];
  truncated: boolean;
  /** Last key or common prefix returned: the resume point for the next page. */
  last: string | undefined;
}

/** First index whose key sorts after `key` (strictly when `strict`). */
function lowerBound(keys: string[], key: string, strict: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(keys[mid]!, key);
    if (c < 0 || (strict && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function listPage(index: BucketIndex, p: ListParams): ListPage {
  const keys = index.keys();
  const page: ListPage = { contents: [], prefixes: [], truncated: false, last: undefined };
  let i = lowerBound(keys, p.prefix, false);
  if (p.after !== undefined && compareKeys(p.after, p.prefix) >= 0) i = Math.max(i, lowerBound(keys, p.after, true));
  // Resuming after a common prefix: skip every key rolled into it.
  let skip: string | undefined;
  if (p.after !== undefined && p.delimiter && p.after.startsWith(p.prefix)) {
    const d = p.after.indexOf(p.delimiter, p.prefix.length);
    if (d >= 0 && d + p.delimiter.length === p.after.length) skip = p.after;
  }
  let count = 0;
  for (; i < keys.length; i++) {
    const key = keys[i]!;
    if (!key.startsWith(p.prefix)) break; // sorted: nothing further can match
    if (skip !== undefined && key.startsWith(skip)) continue;
    let common: string | undefined;
    if (p.delimiter) {
      const d = key.indexOf(p.delimiter, p.prefix.length);
      if (d >= 0) common = key.slice(0, d + p.delimiter.length);
    }
    if (count >= p.maxKeys) {
      page.truncated = p.maxKeys > 0;
      break;
    }
    count++;
    if (common !== undefined) {
      page.prefixes.push(common);
      page.last = common;
      skip = common;
    } else {
      page.contents.push([key, index.entries.get(key)!]);
      page.last = key;
    }
  }
  return page;
}
