// What a failed range or service call does to a download: retried later, the one
// entry failed, or the whole download stopped in error (resumable).
import { describe, expect, test } from 'vitest';
import { HostedApiError } from '../../../src/client/http.js';
import { LocalWriteError } from '../../../src/agent/engine/batchedWriter.js';
import { classify, ItemError } from '../../../src/agent/engine/downloadErrors.js';
import { RangeHttpError } from '../../../src/agent/engine/rangeFetch.js';
import { UnsafePathError } from '../../../src/agent/engine/safePath.js';
import { failureKind } from '../../../src/agent/engine/retry.js';

const errno = (code: string, path?: string) => Object.assign(new Error(code), { code, ...(path ? { path } : {}) });

describe('classify', () => {
  test.each([408, 429, 500, 503])('the store or the service answering %i is retried', (status) => {
    expect(classify(new RangeHttpError(status, 'x')).kind).toBe('retry');
    expect(classify(new HostedApiError(status, 'x', 'x')).kind).toBe('retry');
  });

  test.each([
    [new HostedApiError(404, 'not_found', 'x'), /the Link or the file is gone/],
    [new HostedApiError(410, 'gone', 'x'), /the Package has expired/],
    [new HostedApiError(401, 'unauthorized', 'x'), /refused its password/],
    [new RangeHttpError(403, 'x'), /refused even when fresh/],
    [new RangeHttpError(416, 'x'), /x/],
  ])('%s stops the download', (err, message) => {
    const f = classify(err);
    expect(f.kind).toBe('fatal');
    expect(f.message).toMatch(message);
  });

  test('a file still being scanned (503 scan_pending) is waited for with its Retry-After, not taken for an outage', () => {
    const err = new HostedApiError(503, 'scan_pending', 'being scanned', '5');
    expect(classify(err)).toMatchObject({ kind: 'retry', cause: 'transient', retryAfter: '5' });
    expect(failureKind(err)).toBe('transient');
    expect(failureKind(new HostedApiError(503, 'unavailable', 'x'))).toBe('outage');
  });

  test.each([
    ['virus_detected', 'skipped: flagged with malware'],
    ['scan_failed', 'skipped: could not be scanned for malware'],
  ])('a file the service withholds (403 %s) is skipped', (code, message) => {
    expect(classify(new HostedApiError(403, code, 'x'))).toEqual({ kind: 'withheld', message });
    expect(classify(new HostedApiError(403, 'forbidden', 'x')).kind).toBe('fatal');
  });

  test('a wrong size or an unusable path fails only its entry', () => {
    expect(classify(new ItemError('size')).kind).toBe('item');
    expect(classify(new UnsafePathError('..')).kind).toBe('item');
  });

  test('network errors are retried; a disk that refuses writes stops the download', () => {
    expect(classify(errno('ECONNRESET')).kind).toBe('retry');
    expect(classify(errno('UND_ERR_SOCKET')).kind).toBe('retry');
    expect(classify(new LocalWriteError('ENOSPC')).kind).toBe('fatal');
    expect(classify(errno('EROFS', '/dst/a.bin')).kind).toBe('fatal');
  });

  test('a disk that refuses writes says what to do', () => {
    const full = classify(new LocalWriteError('writing the file failed: no space left', { cause: errno('ENOSPC', '/dst/a.bin') }));
    expect(full).toEqual({ kind: 'fatal', message: 'writing the file failed: no space left; free some space on that disk (or choose another folder), then resume' });
    expect(classify(new LocalWriteError('x', { cause: errno('EACCES', '/dst') })).message).toMatch(/make the folder writable/);
  });

  test('outages, transient failures and the unforeseen carry what the retry needs', () => {
    expect(classify(errno('ECONNREFUSED'))).toMatchObject({ kind: 'retry', cause: 'outage' });
    expect(classify(new HostedApiError(503, 'busy', 'later', '7'))).toMatchObject({ kind: 'retry', cause: 'outage', retryAfter: '7' });
    expect(classify(new HostedApiError(500, 'internal', 'x'))).toMatchObject({ kind: 'retry', cause: 'transient' });
    expect(classify(new Error('no idea'))).toMatchObject({ kind: 'retry', cause: 'suspect' });
  });
});
