// resolveHostedConfig: flags beat FERRY_* variables, defaults, and the checks
// on HOST:PORT, --init-owner and the external S3 settings.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { defaultDataDir, parseHostPort, resolveHostedConfig } from '../../../src/hosted/config.js';

const env = { XDG_DATA_HOME: '/xdg' };

describe('defaults', () => {
  test('with no flags and no FERRY_* variables', () => {
    const c = resolveHostedConfig({}, env);
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 7400,
      dataDir: path.resolve('/xdg/ferry/hosted'),
      publicUrl: 'http://127.0.0.1:7400',
      linkUrl: 'http://127.0.0.1:7400/l',
      s3Listen: { host: '127.0.0.1', port: 7401 },
      bucket: 'ferry',
      blueprintTtlSeconds: 3600,
      sweepIntervalMs: 60_000,
      webhookRetryBaseMs: 10_000,
      webhookTimeoutMs: 10_000,
      jobsPollMs: 1000,
      jobsLeaseMs: 60_000,
      jobsConcurrency: 4,
      cloudPartSize: 64 * 1024 * 1024,
      cloudPartConcurrency: 4,
      cloudPageSize: 1000,
      cloudAttempts: 5,
      cloudRetryBaseMs: 30_000,
      logLevel: 'info',
    });
    expect(c.initOwner).toBeUndefined();
    expect(c.smtp).toBeUndefined();
    expect(c.s3).toBeUndefined();
  });

  test('webhook and jobs settings from flags and FERRY_* variables, checked', () => {
    const c = resolveHostedConfig({ 'webhook-retry-base-ms': '50', 'jobs-concurrency': '2' }, { ...env, FERRY_WEBHOOK_TIMEOUT_MS: '500', FERRY_JOBS_LEASE_MS: '2000' });
    expect(c).toMatchObject({ webhookRetryBaseMs: 50, webhookTimeoutMs: 500, jobsLeaseMs: 2000, jobsConcurrency: 2 });
    expect(() => resolveHostedConfig({ 'jobs-concurrency': '0' }, env)).toThrow(/--jobs-concurrency must be an integer >= 1/);
    expect(c.cloudAwsEndpoint).toBeUndefined();
  });

  test('cloud transfer settings, checked', () => {
    const c = resolveHostedConfig({ 'cloud-part-size': String(8 * 1024 * 1024), 'cloud-aws-endpoint': 'http://127.0.0.1:9000/' }, { ...env, FERRY_CLOUD_RETRY_BASE_MS: '20' });
    expect(c).toMatchObject({ cloudPartSize: 8 * 1024 * 1024, cloudRetryBaseMs: 20, cloudAwsEndpoint: 'http://127.0.0.1:9000' });
    expect(() => resolveHostedConfig({ 'cloud-part-size': '1048576' }, env)).toThrow(/--cloud-part-size must be an integer >= 5242880/);
    expect(() => resolveHostedConfig({ 'webhook-timeout-ms': 'soon' }, env)).toThrow(/--webhook-timeout-ms/);
  });

  test('the data dir falls back to ~/.local/share without XDG_DATA_HOME', () => {
    expect(defaultDataDir({ HOME: '/home/x' })).toMatch(/\.local[/\\]share[/\\]ferry[/\\]hosted$/);
  });

  test('an ephemeral API port gives an ephemeral store port', () => {
    expect(resolveHostedConfig({ listen: '127.0.0.1:0' }, env).s3Listen).toEqual({ host: '127.0.0.1', port: 0 });
  });
});

describe('flags and environment', () => {
  test('FERRY_* variables apply when no flag is given', () => {
    const c = resolveHostedConfig({}, { ...env, FERRY_LISTEN: '0.0.0.0:9000', FERRY_DATA_DIR: '/srv/ferry', FERRY_LOG_LEVEL: 'debug', FERRY_S3_LISTEN: '127.0.0.1:9100' });
    expect(c).toMatchObject({ host: '0.0.0.0', port: 9000, dataDir: path.resolve('/srv/ferry'), logLevel: 'debug', s3Listen: { host: '127.0.0.1', port: 9100 } });
  });

  test('a flag wins over its variable', () => {
    const c = resolveHostedConfig({ listen: '127.0.0.1:8000', 'data-dir': '/flag' }, { ...env, FERRY_LISTEN: '0.0.0.0:9000', FERRY_DATA_DIR: '/env' });
    expect(c).toMatchObject({ port: 8000, host: '127.0.0.1', dataDir: path.resolve('/flag') });
  });

  test('an empty variable counts as unset', () => {
    expect(resolveHostedConfig({}, { ...env, FERRY_LISTEN: '' }).port).toBe(7400);
  });

  test('public and link URLs lose trailing slashes; the link URL follows the public URL', () => {
    const c = resolveHostedConfig({ 'public-url': 'https://ferry.example.com//' }, env);
    expect(c.publicUrl).toBe('https://ferry.example.com');
    expect(c.linkUrl).toBe('https://ferry.example.com/l');
    expect(resolveHostedConfig({ 'link-url': 'https://dl.example.com/' }, env).linkUrl).toBe('https://dl.example.com');
  });

  test('an IPv6 listen address is bracketed in the public URL', () => {
    const c = resolveHostedConfig({ listen: '[::1]:7400' }, env);
    expect(c.host).toBe('::1');
    expect(c.publicUrl).toBe('http://[::1]:7400');
  });
});

describe('HOST:PORT', () => {
  test.each(['localhost', ':7400', 'host:', 'host:abc', 'host:70000', 'host:7400:1', 'a b'])('"%s" is refused', (v) => {
    expect(() => parseHostPort(v, '--listen')).toThrow(/--listen must be HOST:PORT/);
    expect(() => resolveHostedConfig({ listen: v }, env)).toThrow(/--listen must be HOST:PORT/);
  });

  test('a bad store address names its own option', () => {
    expect(() => resolveHostedConfig({ 's3-listen': 'nope' }, env)).toThrow(/--s3-listen must be HOST:PORT/);
  });

  test('valid forms parse', () => {
    expect(parseHostPort('0.0.0.0:0', 'x')).toEqual({ host: '0.0.0.0', port: 0 });
    expect(parseHostPort('example.com:65535', 'x')).toEqual({ host: 'example.com', port: 65535 });
    expect(parseHostPort('[fe80::1]:80', 'x')).toEqual({ host: 'fe80::1', port: 80 });
  });
});

describe('--init-owner', () => {
  test('splits at the first colon, so the password may hold colons', () => {
    expect(resolveHostedConfig({ 'init-owner': 'boss@example.com:pa:ss:word' }, env).initOwner).toEqual({ email: 'boss@example.com', password: 'pa:ss:word' });
  });

  test('comes from FERRY_INIT_OWNER too', () => {
    expect(resolveHostedConfig({}, { ...env, FERRY_INIT_OWNER: 'a@b.c:pw' }).initOwner).toEqual({ email: 'a@b.c', password: 'pw' });
  });

  test.each(['boss@example.com', 'boss@example.com:', ':password'])('"%s" is refused', (v) => {
    expect(() => resolveHostedConfig({ 'init-owner': v }, env)).toThrow(/--init-owner must be EMAIL:PASSWORD/);
  });
});

describe('external S3', () => {
  test('an endpoint needs both keys', () => {
    expect(() => resolveHostedConfig({ 's3-endpoint': 'http://s3.local' }, env)).toThrow(/--s3-access-key and --s3-secret-key/);
    expect(() => resolveHostedConfig({ 's3-endpoint': 'http://s3.local', 's3-access-key': 'k' }, env)).toThrow(/--s3-secret-key/);
  });

  test('defaults: region us-east-1, path style on, bucket ferry; the endpoint loses trailing slashes', () => {
    const c = resolveHostedConfig({ 's3-endpoint': 'http://s3.local:9000/', 's3-access-key': 'k', 's3-secret-key': 's' }, env);
    expect(c.s3).toEqual({ endpoint: 'http://s3.local:9000', bucket: 'ferry', region: 'us-east-1', accessKey: 'k', secretKey: 's', pathStyle: true });
  });

  test('settings come from flags or variables; path style can be turned off', () => {
    const c = resolveHostedConfig(
      { 's3-bucket': 'media' },
      { ...env, FERRY_S3_ENDPOINT: 'https://s3.example.com', FERRY_S3_ACCESS_KEY: 'AK', FERRY_S3_SECRET_KEY: 'SK', FERRY_S3_REGION: 'eu-west-1', FERRY_S3_PATH_STYLE: 'false' },
    );
    expect(c.s3).toEqual({ endpoint: 'https://s3.example.com', bucket: 'media', region: 'eu-west-1', accessKey: 'AK', secretKey: 'SK', pathStyle: false });
    expect(c.bucket).toBe('media');
  });

  test('a boolean flag turns path style on', () => {
    const c = resolveHostedConfig({ 's3-endpoint': 'http://s3', 's3-access-key': 'k', 's3-secret-key': 's', 's3-path-style': true }, { ...env, FERRY_S3_PATH_STYLE: 'no' });
    expect(c.s3?.pathStyle).toBe(true);
  });
});

describe('SMTP', () => {
  test('is off without a host, and defaults port 587, no TLS, a no-reply sender, certificates checked', () => {
    expect(resolveHostedConfig({ 'smtp-user': 'u' }, env).smtp).toBeUndefined();
    expect(resolveHostedConfig({ 'smtp-host': 'mail.local' }, env).smtp).toEqual({
      host: 'mail.local', port: 587, secure: false, user: undefined, pass: undefined, from: 'Ferry <no-reply@ferry.local>', tlsInsecure: false,
    });
  });

  test('--smtp-ca-file is resolved to a path; --smtp-tls-insecure turns the check off', () => {
    const c = resolveHostedConfig({ 'smtp-host': 'mail.local', 'smtp-ca-file': 'relay-ca.pem', 'smtp-tls-insecure': true }, env).smtp!;
    expect([c.ca, c.tlsInsecure]).toEqual([path.resolve('relay-ca.pem'), true]);
  });

  test('takes its settings from flags and variables', () => {
    const c = resolveHostedConfig({ 'smtp-host': 'mail.local', 'smtp-secure': true }, { ...env, FERRY_SMTP_PORT: '465', FERRY_SMTP_USER: 'u', FERRY_SMTP_PASS: 'p' });
    expect(c.smtp).toMatchObject({ port: 465, secure: true, user: 'u', pass: 'p' });
  });
});

describe('sessions', () => {
  test('--max-session-days: 30 by default, in days, at least 1; FERRY_MAX_SESSION_DAYS too', () => {
    expect(resolveHostedConfig({}, env).maxSessionSeconds).toBe(30 * 86400);
    expect(resolveHostedConfig({ 'max-session-days': '7' }, env).maxSessionSeconds).toBe(7 * 86400);
    expect(resolveHostedConfig({}, { ...env, FERRY_MAX_SESSION_DAYS: '90' }).maxSessionSeconds).toBe(90 * 86400);
    expect(() => resolveHostedConfig({ 'max-session-days': '0' }, env)).toThrow(/--max-session-days/);
  });
});

describe('rate limits, lockouts, trust proxy', () => {
  test('defaults: 10 sign-ins, 60 public, 600 per credential, 6000 per Package a minute; 3 free wrong secrets, lock at 10 for 15 min; no proxy trusted', () => {
    const c = resolveHostedConfig({}, env);
    expect(c.rateLimits).toEqual({ windowMs: 60_000, signIn: 10, public: 60, api: 600, package: 6000 });
    expect(c.lockout).toEqual({ freeFailures: 3, delayMs: 1000, lockAfter: 10, lockMs: 900_000, forgetMs: 900_000 });
    expect(c.trustProxy).toBe(false);
  });

  test('flags and FERRY_* variables set them; 0 is accepted (that class off); a negative limit is refused', () => {
    const c = resolveHostedConfig({ 'rate-limit-api': '50', 'lockout-after': '4' }, { ...env, FERRY_RATE_LIMIT_PUBLIC: '0', FERRY_LOCKOUT_MS: '1000' });
    expect(c.rateLimits).toMatchObject({ api: 50, public: 0 });
    expect(c.lockout).toMatchObject({ lockAfter: 4, lockMs: 1000 });
    expect(() => resolveHostedConfig({ 'rate-limit-sign-in': '-1' }, env)).toThrow(/--rate-limit-sign-in/);
  });

  test('--trust-proxy: true, or addresses; a hop count is refused', () => {
    expect(resolveHostedConfig({ 'trust-proxy': 'true' }, env).trustProxy).toBe(true);
    expect(resolveHostedConfig({ 'trust-proxy': 'off' }, env).trustProxy).toBe(false);
    expect(() => resolveHostedConfig({}, { ...env, FERRY_TRUST_PROXY: '2' })).toThrow(/hop count/);
    expect(resolveHostedConfig({ 'trust-proxy': '127.0.0.1,10.0.0.0/8' }, env).trustProxy).toBe('127.0.0.1,10.0.0.0/8');
  });
});

describe('Portal uploads: upload token and unfinished Packages', () => {
  test('defaults: a week each', () => {
    const c = resolveHostedConfig({}, env);
    expect(c.uploadTokenTtlSeconds).toBe(7 * 24 * 3600);
    expect(c.unfinishedPackageTtlMs).toBe(7 * 24 * 3600 * 1000);
  });

  test('hours from flags and FERRY_* variables, fractions allowed; 0 turns the sweep off but is no token lifetime', () => {
    const c = resolveHostedConfig({ 'upload-token-ttl-hours': '0.5' }, { ...env, FERRY_UNFINISHED_PACKAGE_TTL_HOURS: '0' });
    expect(c).toMatchObject({ uploadTokenTtlSeconds: 1800, unfinishedPackageTtlMs: 0 });
    expect(() => resolveHostedConfig({ 'upload-token-ttl-hours': '0' }, env)).toThrow(/--upload-token-ttl-hours must be a number of hours > 0/);
    expect(() => resolveHostedConfig({ 'unfinished-package-ttl-hours': '-1' }, env)).toThrow(/--unfinished-package-ttl-hours/);
    expect(() => resolveHostedConfig({ 'unfinished-package-ttl-hours': 'a week' }, env)).toThrow(/--unfinished-package-ttl-hours/);
  });
});

describe('instances: role, shutdown grace, shared keys', () => {
  const s3 = { 's3-endpoint': 'http://127.0.0.1:9000', 's3-access-key': 'k', 's3-secret-key': 's' };
  const key = Buffer.alloc(32, 7).toString('base64');

  test('defaults: role all, a 30 s grace, the keys from the data dir', () => {
    const c = resolveHostedConfig({}, env);
    expect(c).toMatchObject({ role: 'all', shutdownGraceMs: 30_000 });
    expect(c.signingKey).toBeUndefined();
    expect(c.sealingKey).toBeUndefined();
  });

  test('--role api or worker needs an external store; an unknown role is refused', () => {
    expect(resolveHostedConfig({ ...s3, role: 'api' }, env).role).toBe('api');
    expect(resolveHostedConfig(s3, { ...env, FERRY_ROLE: 'worker' }).role).toBe('worker');
    expect(() => resolveHostedConfig({ role: 'worker' }, env)).toThrow(/--role worker needs an external S3 store/);
    expect(() => resolveHostedConfig({ ...s3, role: 'cron' }, env)).toThrow(/--role must be api, worker or all/);
  });

  test('FERRY_SIGNING_KEY / FERRY_SEALING_KEY in base64, or the key files; a key that is not 32 bytes, or both forms, refused', () => {
    const c = resolveHostedConfig({ 'sealing-key-file': 'keys/sealing' }, { ...env, FERRY_SIGNING_KEY: key, FERRY_SHUTDOWN_GRACE_MS: '5000' });
    expect(c.signingKey).toEqual({ base64: key });
    expect(c.sealingKey).toEqual({ file: path.resolve('keys/sealing') });
    expect(c.shutdownGraceMs).toBe(5000);
    expect(() => resolveHostedConfig({}, { ...env, FERRY_SEALING_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/FERRY_SEALING_KEY must be 32 bytes/);
    expect(() => resolveHostedConfig({}, { ...env, FERRY_SIGNING_KEY: 'not base64!' })).toThrow(/FERRY_SIGNING_KEY must be 32 bytes/);
    expect(() => resolveHostedConfig({ 'signing-key-file': 'k' }, { ...env, FERRY_SIGNING_KEY: key })).toThrow(/not both/);
  });
});

describe('--database', () => {
  test('absent: SQLite in the data dir (no database setting)', () => {
    expect(resolveHostedConfig({}, env).database).toBeUndefined();
  });

  test('a postgres:// URL from the flag or FERRY_DATABASE_URL; the flag wins', () => {
    expect(resolveHostedConfig({}, { ...env, FERRY_DATABASE_URL: 'postgres://u@db:5432/ferry' }).database).toBe('postgres://u@db:5432/ferry');
    expect(resolveHostedConfig({ database: 'postgresql://u@a/f' }, { ...env, FERRY_DATABASE_URL: 'postgres://u@b/f' }).database).toBe('postgresql://u@a/f');
  });

  test('anything else is refused, without echoing a password', () => {
    expect(() => resolveHostedConfig({ database: 'mysql://root:hunter2@db/ferry' }, env)).toThrow(/postgres:\/\/ URL/);
    expect(() => resolveHostedConfig({ database: 'mysql://root:hunter2@db/ferry' }, env)).not.toThrow(/hunter2/);
    expect(() => resolveHostedConfig({ database: '/var/lib/ferry.db' }, env)).toThrow(/--data-dir/);
  });
});
