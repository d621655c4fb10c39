// Diagnostics (GET /diagnostics, POST /diagnostics/bundle, Settings' "About this
// computer" and "Make a support bundle", `ferry diagnostics`): what a person
// asking for help is asked for, gathered in one answer with every secret hidden
// (docs/agent-api-notes/diagnostics.md).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AgentContext } from '../context.js';
import type { SettingsService } from './settings.js';
import type { SessionService } from './session.js';
import { buildInfo } from './system.js';
import { HIDDEN, type BundleAnswer, type BundleBody, type Diagnostics, type StoreReach } from '../../api/agent/diagnostics.js';
import { destinations, diskSpace, downloadsFolder, probeService, probeStore } from '../diagnostics/probes.js';
import { knownSecrets, redact, redactDeep, withoutCredentials } from '../diagnostics/secrets.js';
import { zipBuffers } from '../diagnostics/zipWriter.js';
import { checkRequestPath, makeFolder } from '../engine/requestPath.js';
import { invalid } from '../errors.js';

/** `2026-11-29T12:10:59.123Z` as `20261129-121059`, for a bundle's name. */
const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

export function createDiagnosticsService(ctx: AgentContext, settings: SettingsService, session: SessionService) {
  const config = ctx.config;

  /** The settings as GET /settings shows them, and the start settings it leaves out; secrets hidden. */
  function shownSettings(): Record<string, unknown> {
    const s: Record<string, unknown> = { ...settings.get() };
    if (typeof s.local_api_key === 'string') s.local_api_key = HIDDEN;
    if (typeof s.hosted_url === 'string') s.hosted_url = withoutCredentials(s.hosted_url);
    return {
      ...s,
      api_key: config.apiKey ? HIDDEN : null,
      config_dir: config.configDir,
      log_level: config.logLevel,
      retry_for_ms: config.retryForMs,
      ui: config.ui,
    };
  }

  /** Each store: those the agent used since it started, and the one of the service on this computer. */
  function storeOrigins(): { origin: string; source: StoreReach['source'] }[] {
    const out: { origin: string; source: StoreReach['source'] }[] = ctx.outages.bases('store').map((origin) => ({ origin, source: 'used' }));
    if (ctx.storeUrl) {
      const origin = new URL(ctx.storeUrl).origin;
      if (!out.some((s) => s.origin === origin)) out.push({ origin, source: 'this_computer' });
    }
    return out;
  }

  async function get(): Promise<Diagnostics> {
    const b = buildInfo();
    const electron = process.versions.electron;
    const [service, stores, disks] = await Promise.all([
      probeService(config.hostedUrl),
      Promise.all(storeOrigins().map(async (s) => ({ ...(await probeStore(s.origin)), source: s.source }))),
      Promise.all([...destinations(ctx.db)].map(([p, uses]) => diskSpace(p, uses))),
    ]);
    const answer: Diagnostics = {
      generated_at: new Date().toISOString(),
      versions: {
        agent: b.version,
        build_stamp: b.stamp,
        node: process.versions.node,
        os: `${os.type()} ${os.release()}`,
        platform: process.platform,
        arch: process.arch,
        app: electron ? { version: process.env.FERRY_APP_VERSION || 'unknown', electron } : null,
      },
      settings: shownSettings(),
      signed_in: session.signedIn(),
      service,
      stores,
      disks,
      recent_problems: ctx.logs.recent(),
      log_files: ctx.logs.files(),
    };
    // Whatever a setting, a log record or an error message carries: a secret is hidden wherever it is.
    return redactDeep(answer, knownSecrets(ctx));
  }

  /** The folder a bundle goes to: the one asked for (checked as any destination from the network), else the Downloads folder. */
  async function bundleFolder(folder: string | undefined): Promise<string> {
    const field = folder === undefined ? 'the Downloads folder' : 'folder';
    const checked = await checkRequestPath(folder ?? downloadsFolder(), { field, kind: 'folder', write: true, create: true });
    await makeFolder(checked.abs, field);
    return checked.abs;
  }

  return {
    get,

    /** Writes a ZIP of the diagnostics, the settings and the log files, secrets removed; answers where and how large. */
    async bundle(body: BundleBody): Promise<BundleAnswer> {
      const folder = await bundleFolder(body.folder);
      const diagnostics = await get();
      const secrets = knownSecrets(ctx);
      const json = (v: unknown) => Buffer.from(`${JSON.stringify(v, null, 2)}\n`);
      const entries = [
        { name: 'diagnostics.json', data: json(diagnostics) },
        { name: 'settings.json', data: json(diagnostics.settings) },
      ];
      for (const file of ctx.logs.files()) {
        const text = await fs.readFile(file, 'utf8').catch(() => undefined);
        if (text !== undefined) entries.push({ name: `logs/${path.basename(file)}`, data: Buffer.from(redact(text, secrets)) });
      }
      const zip = zipBuffers(entries);
      const now = new Date();
      for (let n = 1; n <= 100; n++) {
        const target = path.join(folder, `ferry-support-${stamp(now)}${n === 1 ? '' : `-${n}`}.zip`);
        try {
          await fs.writeFile(target, zip, { flag: 'wx', mode: 0o600 });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
          throw invalid(`the support bundle could not be written to ${folder}: ${(err as Error).message}`, body.folder === undefined ? undefined : 'folder');
        }
        ctx.log.info({ path: target, size: zip.length }, 'support bundle written');
        return { path: target, size: zip.length };
      }
      throw invalid(`${folder} holds 100 support bundles of this second already`);
    },
  };
}

export type DiagnosticsService = ReturnType<typeof createDiagnosticsService>;
