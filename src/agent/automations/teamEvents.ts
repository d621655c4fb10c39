// Following a Team's event stream on the service for the Portal download
// automations: connected while the automation runs, reconnecting with a growing
// pause (1 s doubling to 60 s) and resuming after the last event id it saw, so a
// reconnect misses nothing the service still keeps. A 404 means a service
// without event streams (or a Team gone): the automation then only polls.
import type { Logger } from 'pino';
import { readEventStream, teamEventsPath, type StreamEvent } from '../../client/events.js';
import { HostedApiError, type Credentials } from '../../client/http.js';
import { pause } from './runner.js';

export interface FinalizedNotice {
  packageId: string;
  portalId: string | null;
  name: string;
  /** When it was finalized (the event's time). */
  finalizedAt: string;
}

export interface FollowTeam {
  baseUrl: string;
  teamId: string;
  /** Read at every connect: a renewed session token is used from then on. */
  credentials(): Credentials;
  /** The service refused `auth` (401: revoked, expired, user gone): the session decides (it ends, or renews an expired token). */
  refused(auth: Credentials, why: string): void;
  signal: AbortSignal;
  /** Aborted when it is worth trying again at once (a session began): cuts a pause between attempts short. */
  nudged(): AbortSignal;
  log: Logger;
  finalized(n: FinalizedNotice): void;
  /**
   * Events may have been missed: the stream opened with no id to resume from
   * (what came before it is not replayed), or the service could not replay
   * everything since the last one. Look again by other means.
   */
  reset(): void;
}

const FIRST_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 60_000;
/** How often an open stream checks that the session it opened with is still the agent's. */
const SESSION_CHECK_MS = 10_000;

const sameSession = (a: Credentials, b: Credentials) => a.apiKey === b.apiKey && a.userToken === b.userToken;

/** Resolves when `signal` aborts, or at once on a 404. */
export async function followTeamEvents(f: FollowTeam): Promise<void> {
  let last: string | undefined;
  let wait = FIRST_PAUSE_MS;
  while (!f.signal.aborted) {
    let heard = false;
    // A sign-out (or a renewed token) ends the connection: no stream outlives the session it was opened with.
    const connection = new AbortController();
    let check: NodeJS.Timeout | undefined;
    let auth: Credentials | undefined;
    try {
      const resumed = last;
      const onOpen = () => {
        if (resumed === undefined) f.reset();
      };
      auth = f.credentials();
      const opened = auth;
      check = setInterval(() => {
        let now: Credentials | undefined;
        try {
          now = f.credentials();
        } catch {
          // signed out
        }
        if (!now || !sameSession(now, opened)) connection.abort();
      }, SESSION_CHECK_MS);
      check.unref();
      const signal = AbortSignal.any([f.signal, connection.signal]);
      await readEventStream(f.baseUrl, teamEventsPath(f.teamId, ['package.finalized']), { auth, lastEventId: last, signal, onOpen }, (m) => {
        heard = true;
        if (m.id) last = m.id;
        if (m.event === 'reset') return f.reset();
        if (m.event !== 'package.finalized') return;
        try {
          const e = JSON.parse(m.data) as StreamEvent;
          f.finalized({ packageId: e.package_id, portalId: e.portal_id, name: String(e.payload.name ?? e.package_id), finalizedAt: e.created_at });
        } catch (err) {
          f.log.warn({ err }, 'portal download: an event it could not read');
        }
      });
      // Ended by the service (it stopped or restarts): reconnect soon.
      wait = FIRST_PAUSE_MS;
    } catch (err) {
      if (f.signal.aborted) return;
      if (err instanceof HostedApiError && err.status === 404) {
        f.log.info({ team: f.teamId }, 'portal download: the service offers no Team event stream; polling only');
        return;
      }
      // Not retried with the same credentials: the session ends (or is renewed) and the next
      // connect, if any, uses what the session holds then; without one there is none to make.
      if (err instanceof HostedApiError && err.status === 401 && auth) f.refused(auth, err.message);
      if (heard || connection.signal.aborted) wait = FIRST_PAUSE_MS;
      f.log.debug({ err, team: f.teamId, retryInMs: wait }, 'portal download: the Team event stream failed');
    } finally {
      clearInterval(check);
    }
    await pause(wait, AbortSignal.any([f.signal, f.nudged()]));
    wait = Math.min(MAX_PAUSE_MS, wait * 2);
  }
}
