// System operations: about, version check, health, validation rules, shutdown.
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { AgentContext } from '../context.js';
import { HostedApiError, HostedHttp } from '../../client/http.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import type { About, Health, Rule, Validation, VersionCheck, VersionInfo } from '../../api/agent/system.js';
import { CreateUploadBody, PortalUploadBody, UploadLinkBody } from '../../api/agent/uploads.js';
import { CreateDownloadBody, DEFAULT_RANGE_SIZE } from '../../api/agent/downloads.js';
import { LoginBody } from '../../api/agent/session.js';
import { packageRoot, packageVersion } from '../../http/packageInfo.js';

/** The version of the agent's interface description (spec: Versioning). */
export const AGENT_API_VERSION = '1.0.0';

const MiB = 1024 * 1024;
/** What the object store accepts per file: the agent clamps chunk sizes into this and raises them to fit. */
export const STORE_CHUNK_LIMITS = { min: 5 * MiB, max: 5 * 1024 * MiB, maxCount: 10_000 } as const;

export interface BuildInfo { version: string; hash: string; buildNumber: string; buildTime: string; stamp: string }

const repoRoot = packageRoot();

/** The commit of HEAD when running from a checkout, read from the files (no git binary needed). */
function gitHead(root: string): string | undefined {
  try {
    let gitDir = path.join(root, '.git');
    if (fs.statSync(gitDir).isFile()) gitDir = path.resolve(root, fs.readFileSync(gitDir, 'utf8').replace(/^gitdir:\s*/, '').trim());
    const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
    if (!ref) return undefined;
    const loose = path.join(gitDir, ref);
    if (fs.existsSync(loose)) return fs.readFileSync(loose, 'utf8').trim();
    return fs.readFileSync(path.join(gitDir, 'packed-refs'), 'utf8').split('\n').find((l) => l.endsWith(` ${ref}`))?.split(' ')[0];
  } catch {
    return undefined;
  }
}

/**
 * The package version, and the commit, build number and time a packaging step
 * passes in as FERRY_BUILD_HASH / FERRY_BUILD_NUMBER / FERRY_BUILD_TIME. From a
 * checkout the commit comes from .git; whatever is unknown is "dev".
 */
export function buildInfo(env: NodeJS.ProcessEnv = process.env): BuildInfo {
  const version = packageVersion(repoRoot);
  const hash = env.FERRY_BUILD_HASH || gitHead(repoRoot) || 'dev';
  return {
    version,
    hash,
    buildNumber: env.FERRY_BUILD_NUMBER || 'dev',
    buildTime: env.FERRY_BUILD_TIME || 'dev',
    stamp: `${version}+${hash === 'dev' ? 'dev' : hash.slice(0, 12)}`,
  };
}

type Json = Record<string, unknown>;

/** A rule from a field's schema: the same numbers the routes validate with. */
function ruleOf(schema: unknown, description: string, appliesTo: string[], extra: Partial<Rule> = {}): Rule {
  let s = schema as Json;
  if (Array.isArray(s.anyOf)) s = (s.anyOf as Json[]).find((x) => x.type !== 'null') ?? s; // `X | null`
  const item = (s.items ?? {}) as Json;
  const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);
  const rule: Rule = { description, type: s.type as Rule['type'], applies_to: appliesTo };
  const pick: [keyof Rule, unknown][] = [
    ['minimum', num(s.minimum)], ['maximum', num(s.maximum)],
    ['min_length', num(s.minLength ?? item.minLength)], ['max_length', num(s.maxLength ?? item.maxLength)],
    ['min_items', num(s.minItems)], ['max_items', num(s.maxItems)],
    ['format', s.format ?? item.format],
  ];
  for (const [k, v] of pick) if (v !== undefined) (rule as Json)[k] = v;
  return { ...rule, ...extra };
}

function validationRules(chunkSizeDefault: number): Record<string, Rule> {
  const up = CreateUploadBody.properties, portal = PortalUploadBody.properties, down = CreateDownloadBody.properties, link = UploadLinkBody.properties;
  return {
    upload_chunk_size: ruleOf(up.chunk_size, `bytes per part of an upload; clamped to ${STORE_CHUNK_LIMITS.min}..${STORE_CHUNK_LIMITS.max} and raised so that a file fits in max_chunk_count parts; the default is the --chunk-size start flag`,
      ['POST /uploads chunk_size', 'POST /portals/uploads chunk_size'], { default: chunkSizeDefault }),
    download_chunk_size: ruleOf(down.chunk_size, 'bytes per ranged GET of a download', ['POST /downloads chunk_size'], { default: DEFAULT_RANGE_SIZE }),
    max_chunk_count: { description: 'parts per uploaded file at most', type: 'integer', applies_to: ['POST /uploads', 'POST /portals/uploads'], maximum: STORE_CHUNK_LIMITS.maxCount },
    priority: ruleOf(up.priority, 'higher is more urgent; parts of the most urgent transfers go first',
      ['POST /uploads priority', 'POST /portals/uploads priority', 'POST /downloads priority'], { default: 0 }),
    paths: ruleOf(up.paths, 'absolute paths of existing files or directories; a directory is sent with everything beneath it',
      ['POST /uploads paths', 'POST /portals/uploads paths']),
    recipients: ruleOf(up.recipients, 'e-mail addresses, at most the Team\'s max_email_recipients; none makes a Link-type upload', ['POST /uploads recipients']),
    package_name: ruleOf(up.package_name, 'the Package\'s name; default: the name of the first path', ['POST /uploads package_name', 'POST /portals/uploads package_name']),
    package_description: ruleOf(up.package_description, 'free text', ['POST /uploads package_description', 'POST /portals/uploads package_description'], { default: '' }),
    password: ruleOf(up.password, 'the default download password of the upload\'s Links', ['POST /uploads password']),
    delete_after: ruleOf(up.delete_after, 'days the Package is kept after it is finalized', ['POST /uploads delete_after']),
    download_limit: ruleOf(up.download_limit, 'the default access limit of the upload\'s Links', ['POST /uploads download_limit']),
    sender_email: ruleOf(portal.sender_email, 'who sends to the Portal', ['POST /portals/uploads sender_email']),
    link_access_limit: ruleOf(link.access_limit, 'downloads allowed through the Link; null is unlimited', ['POST /uploads/{upload_id}/link access_limit']),
    link_password: ruleOf(link.password, 'the Link\'s password; empty means none', ['POST /uploads/{upload_id}/link password']),
    dst_folder: ruleOf(down.dst_folder, 'absolute path of the destination directory; created when missing; nothing is written outside it', ['POST /downloads dst_folder']),
    file_ids: ruleOf(down.file_ids, 'Package entries to fetch; a directory\'s id selects everything beneath it', ['POST /downloads file_ids']),
    login_email: ruleOf(LoginBody.properties.email, 'the user\'s e-mail address', ['POST /login email']),
  };
}

/** The feed file of this platform, as electron-builder names them. */
const FEED_FILE = process.platform === 'darwin' ? 'latest-mac.yml' : process.platform === 'linux' ? 'latest-linux.yml' : 'latest.yml';

async function feedVersion(hostedUrl: string): Promise<string | undefined> {
  const res = await fetch(`${hostedUrl.replace(/\/+$/, '')}/updates/${FEED_FILE}`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) return undefined;
  const doc = parseYaml(await res.text()) as { version?: unknown } | null;
  return typeof doc?.version === 'string' && /^\d+\.\d+\.\d+/.test(doc.version) ? doc.version : undefined;
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b` (major.minor.patch; a pre-release is older). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.split('-', 2);
    return { nums: core.split('.').map((n) => Number.parseInt(n, 10) || 0), pre };
  };
  const x = parse(a), y = parse(b);
  for (let i = 0; i < 3; i++) if ((x.nums[i] ?? 0) !== (y.nums[i] ?? 0)) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  if (x.pre === y.pre) return 0;
  return x.pre === undefined ? 1 : y.pre === undefined ? -1 : x.pre < y.pre ? -1 : 1;
}

export function createSystemService(ctx: AgentContext, shutdown: () => void) {
  const current = (): VersionInfo => {
    const b = buildInfo();
    return { version: b.version, build_stamp: b.stamp, masv_host: ctx.config.hostedUrl };
  };

  return {
    about(): About {
      const b = buildInfo();
      return {
        ...current(),
        backend: { hash: b.hash, build_number: b.buildNumber, build_time: b.buildTime },
        settings: { auto_finalize: ctx.config.autoFinalize, chunk_size: ctx.config.chunkSize, concurrency: ctx.config.concurrency },
      };
    },

    /**
     * The latest version in the service's update feed (`/updates/latest*.yml`, the
     * desktop app's feed: `ferry serve --updates-dir`). Without a feed, or when the
     * service cannot be reached, the running version counts as the latest.
     */
    async versionCheck(): Promise<VersionCheck> {
      const now = current();
      const latest = await feedVersion(ctx.config.hostedUrl).catch((err: unknown) => {
        ctx.log.debug({ err }, 'version check: no update feed');
        return undefined;
      });
      if (!latest || compareVersions(latest, now.version) <= 0) return { current_version: now, latest_version: { ...now }, update_available: false };
      return { current_version: now, latest_version: { version: latest, build_stamp: latest, masv_host: now.masv_host }, update_available: true };
    },

    /** The database must answer; the hosted service is probed (2 s) but its absence is not ill health. */
    async health(): Promise<Health> {
      let database: Health['database'] = 'ok';
      try {
        ctx.db.prepare('SELECT 1').get();
      } catch (err) {
        ctx.log.error({ err }, 'health: the database does not answer');
        database = 'error';
      }
      const probe = new HostedHttp(ctx.config.hostedUrl);
      let hosted: Health['hosted'] = 'reachable';
      try {
        await probe.request('GET', '/v1/system/packages/spec', { signal: AbortSignal.timeout(2000) });
      } catch (err) {
        if (!(err instanceof HostedApiError)) hosted = 'unreachable';
      } finally {
        await probe.close();
      }
      return { code: database === 'ok' ? 0 : AgentErrorCode.internal, database, hosted };
    },

    validation(): Validation {
      return { version: AGENT_API_VERSION, rules: validationRules(ctx.config.chunkSize) };
    },

    /** Stops the agent once `answered` settles: the caller's answer goes out first. */
    shutdown(answered: Promise<unknown>) {
      void answered.finally(() => setImmediate(shutdown));
      return { code: 0 };
    },
  };
}
export type SystemService = ReturnType<typeof createSystemService>;
