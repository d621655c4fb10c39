// Every operation of the agent, grouped by concept. REST routes and the desktop
// app's IPC handler table both call these, so behaviour is written once.
import type { AgentContext } from '../context.js';
import { createSessionService, type SessionService } from './session.js';
import { createSystemService, type SystemService } from './system.js';
import { createUploadsService, type UploadsService } from './uploads.js';
import { createDownloadsService, type DownloadsService } from './downloads.js';
import { createEventsService, type EventsService } from './events.js';
import { createFoldersService, type FoldersService } from './folders.js';
import { createSettingsService, type SettingsService } from './settings.js';
import { createAutomationsService, type AutomationsService } from './automations.js';
import { createGatewaysService, type GatewaysService } from './gateways.js';
import { createDiagnosticsService, type DiagnosticsService } from './diagnostics.js';
import { createDisksService, type DisksService } from './disks.js';

export interface AgentServices {
  system: SystemService;
  session: SessionService;
  uploads: UploadsService;
  downloads: DownloadsService;
  events: EventsService;
  folders: FoldersService;
  settings: SettingsService;
  automations: AutomationsService;
  gateways: GatewaysService;
  diagnostics: DiagnosticsService;
  disks: DisksService;
}

/** Why the agent stops: for good, or to start again with its new settings. */
export type StopReason = 'shutdown' | 'restart';

export function createServices(ctx: AgentContext, stop: (why: StopReason) => void): AgentServices {
  const session = createSessionService(ctx);
  const uploads = createUploadsService(ctx, session);
  const downloads = createDownloadsService(ctx);
  const gateways = createGatewaysService(ctx, session);
  const retryNow = () => {
    uploads.retryNow();
    downloads.retryNow();
  };
  // A target that answers again: everything that waited for it goes on together, what
  // had given up resumes, and a session that could not be renewed meanwhile is.
  ctx.outages.onUp((t) => {
    retryNow();
    uploads.resumeRecoverable();
    downloads.resumeRecoverable();
    if (t.kind === 'service') {
      session.serviceBack();
      gateways.retryNow();
    }
  });
  ctx.sleep.onWake((sleptMs) => {
    ctx.log.info({ slept_ms: sleptMs }, 'the machine woke up: dropping connections and retrying now');
    ctx.outages.reconnect();
    session.hosted.reconnect();
    uploads.reconnect();
    downloads.reconnect();
    gateways.reconnect();
    ctx.outages.probeAllNow();
    retryNow();
    session.serviceBack();
  });
  const settings = createSettingsService(ctx, session, () => stop('restart'));
  return {
    system: createSystemService(ctx, () => stop('shutdown')),
    session,
    uploads,
    downloads,
    events: createEventsService(ctx),
    folders: createFoldersService(ctx.db),
    settings,
    automations: createAutomationsService(ctx, session, uploads, downloads),
    gateways,
    diagnostics: createDiagnosticsService(ctx, settings, session),
    disks: createDisksService(ctx),
  };
}
