// What an automation's runner gets from the agent, and what it offers: the
// automations service starts one runner per enabled automation and stops it
// when the automation is disabled, changed or deleted, or the agent stops.
import type { AgentContext } from '../context.js';
import type { SessionService } from '../services/session.js';
import type { UploadsService } from '../services/uploads.js';
import type { DownloadsService } from '../services/downloads.js';
import type { AutomationFields, AutomationType } from '../../api/agent/automations.js';
import { AgentError } from '../errors.js';
import { HostedApiError } from '../../client/http.js';
import type { AutomationTuning } from './timing.js';

export interface RunnerHost {
  ctx: AgentContext;
  session: SessionService;
  uploads: UploadsService;
  downloads: DownloadsService;
  tuning: AutomationTuning;
  /** Records that the automation started a Package (`ran`) and/or its last error (null clears it); publishes the change. */
  outcome(automationId: string, o: { ran?: boolean; error?: string | null }): void;
}

export interface RunnerSpec {
  id: string;
  type: AutomationType;
  fields: AutomationFields;
}

export interface Runner {
  start(): void;
  /** Stops watching or polling; what it started (uploads, downloads) goes on. */
  stop(): Promise<void>;
  /** Looks again soon: the session is back, or a transfer of this automation ended. */
  kick(): void;
}

/** A failure that may go away by itself (the service down or failing, no session yet): worth trying again later. */
export function isTransient(err: unknown): boolean {
  if (err instanceof AgentError || err instanceof HostedApiError) return err.status >= 500 || err.status === 401 || err.status === 408 || err.status === 429;
  return true;
}

export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
