// Versions of the update feed against the running one.
import { expect, test } from 'vitest';
import { compareVersions } from '../../../src/agent/services/system.js';

test('versions compare by major, minor and patch; a pre-release is older than its release', () => {
  expect(compareVersions('1.10.0', '1.9.9')).toBeGreaterThan(0);
  expect(compareVersions('0.1.0', '0.1.0')).toBe(0);
  expect(compareVersions('0.2.0-beta.1', '0.2.0')).toBeLessThan(0);
  expect(compareVersions('0.1.9', '0.2.0')).toBeLessThan(0);
});
