// Following the agent's change feed: which event types, and from which id on. The
// SSE route and the desktop app's IPC bridge both follow it through here; each
// only frames the events for its transport.
import type { AgentContext } from '../context.js';
import { EVENT_TYPES, type EventType } from '../../api/agent/events.js';
import { invalid } from '../errors.js';
import type { AgentEvent } from '../events.js';

export interface FollowRequest {
  /** Comma-separated event types; empty or absent: all of them. */
  types?: string;
  /** Replay what came after this id (a reconnecting client's Last-Event-ID wins over `since`). */
  lastEventId?: string;
  since?: number;
  /** Comma-separated transfer ids whose file changes to follow too, or `*` for all. */
  files?: string;
}

export interface EventsService {
  /**
   * Checks the request (400 on a bad one). The answer starts the feed: it replays
   * and follows the chosen events into `listener`, and returns the unsubscribe function.
   */
  follow(req: FollowRequest): (listener: (e: AgentEvent) => void) => () => void;
}

function parseTypes(text: string | undefined): Set<EventType> {
  if (text === undefined || text.trim() === '') return new Set(EVENT_TYPES);
  const out = new Set<EventType>();
  for (const t of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!(EVENT_TYPES as readonly string[]).includes(t)) throw invalid(`types: unknown event type "${t}" (known: ${EVENT_TYPES.join(', ')})`);
    out.add(t as EventType);
  }
  return out;
}

function parseSince(lastEventId: string | undefined, since: number | undefined): number | undefined {
  if (lastEventId === undefined || lastEventId.trim() === '') return since;
  if (!/^\d{1,15}$/.test(lastEventId.trim())) throw invalid('Last-Event-ID must be a non-negative integer');
  return Number(lastEventId.trim());
}

function parseFiles(text: string | undefined): ((id: string) => boolean) | undefined {
  if (text === undefined || text === '') return undefined;
  if (text === '*') return () => true;
  const ids = new Set(text.split(','));
  return (id) => ids.has(id);
}

export function createEventsService(ctx: AgentContext): EventsService {
  return {
    follow(req) {
      const types = parseTypes(req.types);
      const since = parseSince(req.lastEventId, req.since);
      const files = parseFiles(req.files);
      return (listener) =>
        ctx.events.subscribe(
          (e) => {
            if (types.has(e.type)) listener(e);
          },
          { since, ...(files ? { files } : {}) },
        );
    },
  };
}
