// When the agent renews a user token and when it gives up: read from the token's own claims.
import { expect, test } from 'vitest';
import { tokenTimes } from '../../../src/agent/services/session.js';

const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

test('renewal is due half-way between iat and exp; both in ms', () => {
  expect(tokenTimes(jwt({ iat: 1_000, exp: 1_000 + 43_200 }))).toEqual({ renewAt: (1_000 + 21_600) * 1000, expiresAt: 44_200 * 1000 });
});

test('a token without iat or exp, or that is no JWT, has no times (never renewed)', () => {
  expect(tokenTimes(jwt({ exp: 5 }))).toBeUndefined();
  expect(tokenTimes(jwt({ iat: '1', exp: 5 }))).toBeUndefined();
  expect(tokenTimes('not-a-token')).toBeUndefined();
  expect(tokenTimes('a.%%%.c')).toBeUndefined();
});
