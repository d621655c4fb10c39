// Every route module of the agent's REST API, one per group of the spec.
import type { AgentRouteModule } from '../app.js';
import system from './system.js';
import session from './session.js';
import uploads from './uploads.js';
import downloads from './downloads.js';
import events from './events.js';
import settings from './settings.js';
import automations from './automations.js';
import storageGateway from './storageGateway.js';
import diagnostics from './diagnostics.js';
import disks from './disks.js';

export const agentRoutes: AgentRouteModule[] = [system, session, uploads, downloads, events, settings, automations, storageGateway, diagnostics, disks];
