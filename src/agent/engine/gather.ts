// Calls to the service that may go one per request or several in one (Ferry's
// batch routes). The first calls go alone; while IN_FLIGHT requests are under
// way the next ones wait, and the waiting ones then go together. A request also
// goes no sooner than `minGapMs` after the one before, unless a whole batch
// waits: a quiet run waits for nothing, and a busy one sends one request for
// many files at a bounded rate. Without the gap a fast service answers so soon
// that batches stay at a few files, and a folder of small files spends the
// Package's rate limit (6000 requests a minute) in 30 s, then waits out the rest
// of the minute (docs/agent-api-notes/uploads.md). A service that answers 404 or
// 405 to the batch route (one that keeps to the spec) gets one request per call
// from then on.
import { HostedApiError } from '../../client/http.js';

/** Requests under way at once: one being answered while the next gathers calls. */
const IN_FLIGHT = 2;

/**
 * The gap between two requests of one gatherer that counts against a Package's
 * rate limit: 25 a second at most, so an upload's two gatherers (registrations,
 * finalizes) send at most 3000 requests a minute, half of the default limit.
 */
export const PACKAGE_CALL_GAP_MS = 40;

/** One call's share of a batch answer: its result, its error, or `alone` to send it again by itself. */
export type Outcome<O> = { ok: O } | { error: unknown } | 'alone';

export interface GatherOps<I, O> {
  /** One request for `items`; one outcome per item, in order. */
  together(items: I[]): Promise<Outcome<O>[]>;
  /** The call by itself, through the spec's route. */
  alone(item: I): Promise<O>;
}

interface Waiting<I, O> {
  item: I;
  done(o: O): void;
  failed(err: unknown): void;
}

const isMissingRoute = (err: unknown) => err instanceof HostedApiError && (err.status === 404 || err.status === 405);

export class Gatherer<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private batches = true;
  /** When the last request went (performance.now()), and the wake-up set for the next. */
  private lastSent = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ops: GatherOps<I, O>,
    private readonly maxBatch: number,
    private readonly minGapMs = 0,
  ) {}

  call(item: I): Promise<O> {
    return new Promise<O>((done, failed) => {
      this.queue.push({ item, done, failed });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < IN_FLIGHT && this.queue.length > 0) {
      const wait = this.lastSent + this.minGapMs - performance.now();
      if (wait > 0 && this.queue.length < this.maxBatch) {
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, Math.ceil(wait));
        return;
      }
      this.lastSent = performance.now();
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async send(batch: Waiting<I, O>[]): Promise<void> {
    let alone = batch;
    if (this.batches && batch.length > 1) {
      try {
        const outcomes = await this.ops.together(batch.map((w) => w.item));
        alone = [];
        batch.forEach((w, i) => {
          const o = outcomes[i];
          if (o === undefined || o === 'alone') alone.push(w);
          else if ('ok' in o) w.done(o.ok);
          else w.failed(o.error);
        });
      } catch (err) {
        if (!isMissingRoute(err)) {
          for (const w of batch) w.failed(err);
          return;
        }
        this.batches = false;
      }
    }
    await Promise.all(alone.map((w) => this.ops.alone(w.item).then(w.done, w.failed)));
  }
}
