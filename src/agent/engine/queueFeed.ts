// What the event feed hears of queue places. One transfer starting moves every
// transfer behind it up a place: with 200 waiting, an event for each of them at
// every start would be a storm of whole records. So places are looked at once
// per `everyMs` after a change, and only the transfers whose place differs from
// the one last sent are told to the feed (which throttles them further).
import type { Lane, Scheduler } from './scheduler.js';

export class QueueFeed {
  /** The place last sent per waiting transfer. */
  private sent = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly lane: Lane,
    private readonly moved: (id: string) => void,
    private readonly everyMs = 500,
  ) {
    scheduler.watchQueue((l) => {
      if (l === lane) this.soon();
    });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private soon(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => this.flush(), this.everyMs);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    if (this.closed) return;
    const now = new Map<string, number>();
    this.scheduler.queue(this.lane).forEach((id, i) => {
      now.set(id, i + 1);
      if (this.sent.get(id) !== i + 1) this.moved(id);
    });
    // Those out of the line (started, or no line any more) lose their place.
    for (const id of this.sent.keys()) if (!now.has(id)) this.moved(id);
    this.sent = now;
  }
}
