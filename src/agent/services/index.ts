// Every operation of the agent, grouped by concept. REST routes and the desktop
// app's IPC handler table both call these, so behaviour is written once.
import type { AgentContext } from '../context.js';
import { createSessionService, type SessionService } from './session.js';
import { createSystemService, type SystemService } from './system.js';
import { createUploadsService, type UploadsService } from './uploads.js';
import { createDownloadsService, type DownloadsService } from './downloads.js';
import { createEventsService, type EventsService } from './events.js';

export interface AgentServices {
  system: SystemService;
  session: SessionService;
  uploads: UploadsService;
  downloads: DownloadsService;
  events: EventsService;
}

export function createServices(ctx: AgentContext, shutdown: () => void): AgentServices {
  const session = createSessionService(ctx);
  return {
    system: createSystemService(ctx, shutdown),
    session,
    uploads: createUploadsService(ctx, session),
    downloads: createDownloadsService(ctx),
    events: createEventsService(ctx),
  };
}
