// What an external bucket's CORS rules leave out of the rule the Portal page needs
// (src/hosted/storage/bucketCors.ts), as `ferry serve` reports it.
import { describe, expect, it } from 'vitest';
import { corsCheckMessage, corsGaps, ferryCorsRule } from '../../../src/hosted/storage/bucketCors.js';

const ORIGINS = ['https://ferry.example.com', 'https://*.portals.example.com'];
const ALL = ['PUT', 'POST', 'GET', 'HEAD'];

describe('corsGaps', () => {
  it("finds nothing missing with Ferry's rule, nor with a wider one of the owner's", () => {
    expect(corsGaps([ferryCorsRule(ORIGINS)], ORIGINS)).toEqual([]);
    expect(corsGaps([{ AllowedOrigins: ['*'], AllowedMethods: [...ALL, 'DELETE'], AllowedHeaders: ['*'], ExposeHeaders: ['etag'] }], ORIGINS)).toEqual([]);
    // One wildcard anywhere, as S3 takes it: https://*.example.com covers the Portal subdomains' pattern too.
    expect(corsGaps([{ AllowedOrigins: ['https://*.example.com'], AllowedMethods: ALL, AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] }], ORIGINS)).toEqual([]);
  });

  it('names each origin with the methods it lacks, and why the rules naming it fall short', () => {
    const rules = [
      { AllowedOrigins: ['https://ferry.example.com'], AllowedMethods: ['GET', 'HEAD'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] },
      { AllowedOrigins: ['https://*.portals.example.com'], AllowedMethods: ALL, AllowedHeaders: ['content-type'] },
    ];
    expect(corsGaps(rules, ORIGINS)).toEqual([
      { origin: 'https://ferry.example.com', methods: ['PUT', 'POST'], headers: false, etag: false },
      { origin: 'https://*.portals.example.com', methods: ALL, headers: true, etag: true },
    ]);
  });

  it('judges a method by the first rule that allows it, as a browser request is', () => {
    const narrow = { AllowedOrigins: ['https://ferry.example.com'], AllowedMethods: ['PUT'], AllowedHeaders: ['content-type'], ExposeHeaders: ['ETag'] };
    const rules = [narrow, ferryCorsRule(['https://ferry.example.com'])];
    expect(corsGaps(rules, ['https://ferry.example.com'])).toEqual([{ origin: 'https://ferry.example.com', methods: ['PUT'], headers: true, etag: false }]);
    expect(corsGaps([ferryCorsRule(['https://ferry.example.com']), narrow], ['https://ferry.example.com'])).toEqual([]);
  });
});

describe("serve's message", () => {
  it('says what is missing and how to add it, in one line', () => {
    const { warn, message } = corsCheckMessage({ state: 'missing', none: true, gaps: corsGaps([], ORIGINS) }, 'ferry', ORIGINS);
    expect(warn).toBe(true);
    expect(message).toBe(
      'bucket ferry has no CORS rules the Portal page needs to upload from the browser: https://ferry.example.com cannot PUT, POST, GET, HEAD; ' +
        'https://*.portals.example.com cannot PUT, POST, GET, HEAD; run "ferry admin bucket-cors" with the same --s3-* settings to add the rule',
    );
    expect(corsCheckMessage({ state: 'ok' }, 'ferry', ORIGINS).warn).toBe(false);
  });
});
