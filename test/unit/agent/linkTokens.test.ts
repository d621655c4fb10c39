// The Link resolutions a preview keeps for the download that follows: kept while
// their read-only token lives (a minute of margin, six hours at most), bounded in number.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { LinkTokens } from '../../../src/agent/services/linkTokens.js';
import type { LinkInfo } from '../../../src/api/hosted/links.js';

const jwt = (exp?: number) => `h.${Buffer.from(JSON.stringify(exp === undefined ? {} : { exp })).toString('base64url')}.s`;
const info = (token: string): LinkInfo => ({
  branding: { primary_color: '#000' }, expiry: null, id: 'lnk_a', name: 'P', package_id: 'pkg_a', package_size: 1, package_token: token, recipient_email: null, sender_email: 's@example.com',
});
const HOUR = 3600_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
});
afterEach(() => vi.useRealTimers());

describe('LinkTokens', () => {
  test('keeps a resolution until a minute before its token expires', () => {
    const t = new LinkTokens();
    const key = LinkTokens.key('http://s', 'lnk_a', 'sec', undefined);
    t.keep(key, info(jwt(Date.now() / 1000 + 3600)));
    expect(t.peek(key)?.package_id).toBe('pkg_a');
    expect(t.peek(LinkTokens.key('http://s', 'lnk_a', 'sec', 'a password'))).toBeUndefined();
    vi.advanceTimersByTime(HOUR - 61_000);
    expect(t.peek(key)).toBeDefined();
    vi.advanceTimersByTime(2_000);
    expect(t.peek(key)).toBeUndefined();
  });

  test('a token about to expire is not kept; one without an expiry is kept six hours; forget drops it', () => {
    const t = new LinkTokens();
    t.keep('a', info(jwt(Date.now() / 1000 + 30)));
    expect(t.peek('a')).toBeUndefined();
    t.keep('b', info('not-a-jwt'));
    vi.advanceTimersByTime(6 * HOUR - 1);
    expect(t.peek('b')).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(t.peek('b')).toBeUndefined();
    t.keep('c', info(jwt()));
    t.forget('c');
    expect(t.peek('c')).toBeUndefined();
  });

  test('holds at most 64 Links', () => {
    const t = new LinkTokens();
    for (let i = 0; i < 100; i++) t.keep(`k${i}`, info(jwt(Date.now() / 1000 + 3600)));
    const kept = Array.from({ length: 100 }, (_, i) => t.peek(`k${i}`)).filter(Boolean);
    expect(kept.length).toBeLessThanOrEqual(64);
    expect(t.peek('k99')).toBeDefined();
  });
});
