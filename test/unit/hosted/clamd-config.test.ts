// --clamd / FERRY_CLAMD: a Unix socket path or HOST:PORT, with the scan's
// timeout, attempts and back-off; and clamd's INSTREAM answers as verdicts.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { resolveHostedConfig } from '../../../src/hosted/config.js';
import { ClamdScanError, parseVerdict } from '../../../src/hosted/scan/clamd.js';

describe('--clamd', () => {
  test('absent: no scanning, default settings', () => {
    const c = resolveHostedConfig({}, {});
    expect(c.clamd).toBeUndefined();
    expect(c).toMatchObject({ clamdTimeoutMs: 300_000, clamdAttempts: 8, clamdRetryBaseMs: 30_000 });
  });

  test('a path (with a slash, or without a colon) is a Unix socket', () => {
    expect(resolveHostedConfig({ clamd: '/run/clamav/clamd.ctl' }, {}).clamd).toEqual({ path: '/run/clamav/clamd.ctl' });
    expect(resolveHostedConfig({ clamd: 'clamd.sock' }, {}).clamd).toEqual({ path: path.resolve('clamd.sock') });
  });

  test('HOST:PORT is TCP, also from FERRY_CLAMD; the flag wins', () => {
    expect(resolveHostedConfig({}, { FERRY_CLAMD: '127.0.0.1:3310' }).clamd).toEqual({ host: '127.0.0.1', port: 3310 });
    expect(resolveHostedConfig({ clamd: 'scanner:3310' }, { FERRY_CLAMD: '127.0.0.1:1' }).clamd).toEqual({ host: 'scanner', port: 3310 });
    expect(() => resolveHostedConfig({ clamd: 'scanner:99999' }, {})).toThrow(/--clamd must be HOST:PORT/);
  });

  test('timeout, attempts and back-off are checked', () => {
    expect(resolveHostedConfig({ 'clamd-attempts': '3', 'clamd-retry-base-ms': '10', 'clamd-timeout-ms': '500' }, {})).toMatchObject({ clamdAttempts: 3, clamdRetryBaseMs: 10, clamdTimeoutMs: 500 });
    expect(() => resolveHostedConfig({ 'clamd-attempts': '0' }, {})).toThrow(/--clamd-attempts/);
  });
});

describe("clamd's answers", () => {
  test('OK, FOUND and ERROR', () => {
    expect(parseVerdict('stream: OK')).toEqual({ clean: true });
    expect(parseVerdict('stream: Eicar-Test-Signature FOUND')).toEqual({ clean: false, signature: 'Eicar-Test-Signature' });
    expect(() => parseVerdict('INSTREAM size limit exceeded. ERROR')).toThrow(expect.objectContaining({ sizeLimit: true }));
    expect(() => parseVerdict('stream: Can\'t allocate memory ERROR')).toThrow(expect.objectContaining({ sizeLimit: false }));
    expect(() => parseVerdict('nonsense')).toThrow(ClamdScanError);
  });
});
