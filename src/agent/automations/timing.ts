// How often automations look again, from the environment (tests shorten them):
//   FERRY_AGENT_AUTOMATION_POLL_MS  a download automation asks the service for new Packages this often (default 30 s)
//   FERRY_AGENT_AUTOMATION_RETRY_MS a watch folder whose send failed for want of the service or the session tries again after this long (default 30 s)
// A watch folder's own `timeout` takes fractions of a minute, so it needs no switch here.

export interface AutomationTuning {
  pollMs: number;
  retryMs: number;
  /** Packages finalized this long before the last one seen are listed again (their commits may land late); duplicates are known by id. */
  overlapMs: number;
  /** Pages of one Portal's list read in one poll, at 50 Packages a page; the rest waits for the next poll. */
  maxPagesPerPoll: number;
}

function ms(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number of milliseconds, got "${raw}"`);
  return Math.min(max, Math.max(min, Math.round(n)));
}

export function automationTuning(env: NodeJS.ProcessEnv = process.env): AutomationTuning {
  return {
    pollMs: ms(env, 'FERRY_AGENT_AUTOMATION_POLL_MS', 30_000, 50, 3_600_000),
    retryMs: ms(env, 'FERRY_AGENT_AUTOMATION_RETRY_MS', 30_000, 50, 3_600_000),
    overlapMs: 5 * 60_000,
    maxPagesPerPoll: 200,
  };
}

/** A watch folder's timeout, in ms. */
export const timeoutMs = (minutes: number) => Math.max(1, Math.round(minutes * 60_000));
