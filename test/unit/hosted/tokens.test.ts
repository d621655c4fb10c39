// Signed tokens: each kind verifies only as itself, a tampered or foreign token
// is refused, and a token verified once (and kept) is still refused after its exp.
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createTokens, REFRESH_GRACE_SECONDS, UPLOAD_TOKEN_TTL_SECONDS } from '../../../src/hosted/auth/tokens.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('tokens', () => {
  test('each kind verifies as itself only', async () => {
    const t = createTokens(randomBytes(32));
    const user = await t.signUser('usr_1', 0);
    const pkg = await t.signPackage({ packageId: 'pkg_1', access: 'upload' });
    expect(await t.verifyUser(user)).toEqual({ userId: 'usr_1', generation: 0, authTime: expect.any(Number) });
    expect(await t.verifyPackage(pkg)).toEqual({ packageId: 'pkg_1', access: 'upload' });
    expect(await t.verifyPackage(user)).toBeNull();
    expect(await t.verifyUser(pkg)).toBeNull();
  });

  test('a tampered token or one signed with another secret is refused, also once the genuine one was verified', async () => {
    const t = createTokens(randomBytes(32));
    const token = await t.signPackage({ packageId: 'pkg_1', access: 'read', linkId: 'lnk_1' });
    expect(await t.verifyPackage(token)).toEqual({ packageId: 'pkg_1', access: 'read', linkId: 'lnk_1' });
    const [h, , sig] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ typ: 'pkg', acc: 'full', sub: 'pkg_1' })).toString('base64url')}.${sig}`;
    expect(await t.verifyPackage(forged)).toBeNull();
    expect(await t.verifyPackage(`${token.slice(0, -2)}xx`)).toBeNull();
    expect(await createTokens(randomBytes(32)).verifyPackage(token)).toBeNull();
  });

  test('a token verified before its exp is refused after it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T12:00:00Z'));
    const t = createTokens(randomBytes(32), 60);
    const token = await t.signUser('usr_1', 0);
    expect(await t.verifyUser(token)).toMatchObject({ userId: 'usr_1' });
    vi.setSystemTime(new Date('2026-11-22T12:00:59Z'));
    expect(await t.verifyUser(token)).toMatchObject({ userId: 'usr_1' });
    vi.setSystemTime(new Date('2026-11-22T12:01:01Z'));
    expect(await t.verifyUser(token)).toBeNull();
    // Refused for its age only: a token signed now is good.
    expect(await t.verifyUser(await t.signUser('usr_2', 0))).toMatchObject({ userId: 'usr_2' });
  });

  test('an anonymous uploader\'s package token expires (a week by default); a full-access one does not', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T12:00:00Z'));
    const t = createTokens(randomBytes(32), 60, 60, 120);
    const upload = await t.signPackage({ packageId: 'pkg_1', access: 'upload' });
    const full = await t.signPackage({ packageId: 'pkg_1', access: 'full' });
    expect(await t.verifyPackage(upload)).toEqual({ packageId: 'pkg_1', access: 'upload' });
    vi.setSystemTime(new Date('2026-11-22T12:02:01Z'));
    expect(await t.verifyPackage(upload)).toBeNull();
    expect(await t.verifyPackage(full)).toEqual({ packageId: 'pkg_1', access: 'full' });
    const week = createTokens(randomBytes(32));
    const claims = JSON.parse(Buffer.from((await week.signPackage({ packageId: 'pkg_1', access: 'upload' })).split('.')[1]!, 'base64url').toString());
    expect(claims.exp - claims.iat).toBe(UPLOAD_TOKEN_TTL_SECONDS);
  });

  test('a user token renews for a week after its exp, and not a second past it; other kinds never', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T12:00:00Z'));
    const t = createTokens(randomBytes(32), 60);
    const token = await t.signUser('usr_1', 0);
    const pkg = await t.signPackage({ packageId: 'pkg_1', access: 'full' });
    vi.setSystemTime(new Date(Date.parse('2026-11-22T12:01:00Z') + (REFRESH_GRACE_SECONDS - 1) * 1000));
    expect(await t.verifyUser(token)).toBeNull();
    expect(await t.verifyUserForRefresh(token)).toMatchObject({ userId: 'usr_1' });
    expect(await t.verifyUserForRefresh(pkg)).toBeNull();
    vi.setSystemTime(new Date(Date.parse('2026-11-22T12:01:00Z') + (REFRESH_GRACE_SECONDS + 1) * 1000));
    expect(await t.verifyUserForRefresh(token)).toBeNull();
  });
});

describe('user token claims', () => {
  test('a user token carries its generation and the time of its sign-in; a renewal passes the sign-in time on', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-22T12:00:00Z'));
    const t = createTokens(randomBytes(32), 60);
    const signIn = Date.parse('2026-11-22T12:00:00Z') / 1000;
    expect(await t.verifyUser(await t.signUser('usr_1', 3))).toEqual({ userId: 'usr_1', generation: 3, authTime: signIn });
    vi.setSystemTime(new Date('2026-11-25T08:00:00Z'));
    const renewed = await t.signUser('usr_1', 3, signIn);
    expect(await t.verifyUser(renewed)).toEqual({ userId: 'usr_1', generation: 3, authTime: signIn });
  });

  test('a token signed before generations (no gen, no auth_time) counts as generation 0 signed in at its iat', async () => {
    const secret = randomBytes(32);
    const t = createTokens(secret);
    const iat = Math.floor(Date.now() / 1000) - 100;
    const old = await new SignJWT({ typ: 'user' }).setProtectedHeader({ alg: 'HS256' }).setSubject('usr_1').setIssuedAt(iat).setExpirationTime(iat + 3600).sign(secret);
    expect(await t.verifyUser(old)).toEqual({ userId: 'usr_1', generation: 0, authTime: iat });
    expect(await t.verifyUserForRefresh(old)).toEqual({ userId: 'usr_1', generation: 0, authTime: iat });
  });
});
