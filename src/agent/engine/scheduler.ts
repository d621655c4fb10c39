// One scheduler for every transfer, with one limit of parts in flight for all of
// them (--concurrency). Each direction (uploads, downloads) has its own queue, and
// when both have parts ready the free slots go to them in turn, so a long upload
// never holds a download back for more than a part. Within a direction, higher
// priority goes first; among equals a transfer already started goes before one
// that has not (then creation order), and one not yet started gets a slot only
// when no started one has a part ready. So about `limit` transfers run at once,
// the others wait their turn in order (their queue place), and no slot sits idle.
//
// FIFO mode (Settings' `fifo`) replaces "about `limit`" by a count: at most
// `maxActive` transfers of a direction hold an active place, given in queue
// order (priority, then creation order) as soon as one is free, whether or not
// the transfer has a part ready yet; the others wait in line. A transfer leaves
// its place when it is removed (complete, idle, paused, failed); one resumed
// comes back into the line at its order, ahead of newer ones, without taking
// the place of one running. `perTransfer` caps the parts in flight of each
// transfer in both modes; the global `limit` still caps them all.

export type Lane = 'upload' | 'download';

export interface PartTask {
  /** Runs one part; must settle (resolve or reject) once `signal` aborts. */
  run(): Promise<void>;
}

export interface Transfer {
  readonly id: string;
  readonly lane: Lane;
  readonly priority: number;
  /** ISO time: the order among equals. */
  readonly createdAt: string;
  /** Whether it moved bytes before it was added (a resume, a restart): it goes on, not back in line. */
  readonly begun: boolean;
  /** The next part ready to go, or undefined when none is ready right now. */
  nextPart(): PartTask | undefined;
}

/** How transfers take turns (Settings' `fifo`, `max_active_uploads`, `max_active_downloads`, `connections_per_transfer`). */
export interface QueueRules {
  fifo: boolean;
  /** Transfers of a direction that run at once in FIFO mode (at least 1). */
  maxActive: Record<Lane, number>;
  /** Parts in flight of one transfer at most; undefined for no cap but the global limit. */
  perTransfer: number | undefined;
}

export const DEFAULT_QUEUE_RULES: QueueRules = { fifo: false, maxActive: { upload: 1, download: 1 }, perTransfer: undefined };

/** The rules of the agent's settings. */
export function queueRulesOf(c: { fifo: boolean; maxActiveUploads: number; maxActiveDownloads: number; connectionsPerTransfer: number | undefined }): QueueRules {
  return { fifo: c.fifo, maxActive: { upload: c.maxActiveUploads, download: c.maxActiveDownloads }, perTransfer: c.connectionsPerTransfer };
}

interface LaneState {
  /** Priority first (highest), then creation order. */
  transfers: Transfer[];
  /** Those that got a slot (or had begun when added). */
  started: Set<string>;
  inFlight: number;
}

const before = (a: Transfer, b: Transfer) => b.priority - a.priority || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0);

export class Scheduler {
  private readonly lanes: Record<Lane, LaneState> = {
    upload: { transfers: [], started: new Set(), inFlight: 0 },
    download: { transfers: [], started: new Set(), inFlight: 0 },
  };
  /** The direction that got the last slot: the other one is asked first for the next. */
  private lastLane: Lane = 'download';
  /** Queue places by id, rebuilt on the first read after a change. */
  private places: Map<string, number> | undefined;
  private readonly queueWatchers: ((lane: Lane) => void)[] = [];
  /** Parts in flight per transfer id; kept across a remove and add (a quick pause and resume), as its parts still settle. */
  private readonly parts = new Map<string, number>();
  private rules: QueueRules;

  constructor(
    private limit: number,
    private readonly onTaskError: (transfer: Transfer, err: unknown) => void = () => {},
    rules: QueueRules = DEFAULT_QUEUE_RULES,
  ) {
    this.rules = { ...rules, maxActive: { ...rules.maxActive } };
  }

  /** Parts in flight at most from now on: more start at once, or fewer as those in flight end. */
  setLimit(limit: number): void {
    this.limit = limit;
    this.wake();
  }

  /**
   * New turn rules from now on: a higher `maxActive` starts more transfers at once, a
   * lower one (or FIFO turned on) lets those running finish and holds new ones back;
   * a lower `perTransfer` lets the parts in flight end.
   */
  setRules(rules: QueueRules): void {
    this.rules = { ...rules, maxActive: { ...rules.maxActive } };
    this.admit('upload');
    this.admit('download');
    this.wake();
  }

  add(t: Transfer): void {
    const lane = this.lanes[t.lane];
    if (!lane.transfers.some((x) => x.id === t.id)) {
      const at = lane.transfers.findIndex((x) => before(t, x) < 0);
      lane.transfers.splice(at < 0 ? lane.transfers.length : at, 0, t);
      // In FIFO mode a transfer that had begun takes its turn in line like any other.
      if (t.begun && !this.rules.fifo) lane.started.add(t.id);
      this.queueChanged(t.lane);
      this.admit(t.lane);
    }
    this.wake();
  }

  /** Stops giving the transfer new slots; its parts in flight finish or abort on their own. */
  remove(id: string): void {
    for (const [name, lane] of Object.entries(this.lanes) as [Lane, LaneState][]) {
      const n = lane.transfers.length;
      lane.transfers = lane.transfers.filter((t) => t.id !== id);
      if (lane.transfers.length === n) continue;
      lane.started.delete(id);
      this.queueChanged(name);
      // Its active place goes to the next in line; woken after the caller's own changes (this is often called while a transfer stops).
      if (this.admit(name)) queueMicrotask(() => this.wake());
    }
  }

  /** Parts in flight in one direction, or in all. */
  inFlight(lane?: Lane): number {
    return lane ? this.lanes[lane].inFlight : this.lanes.upload.inFlight + this.lanes.download.inFlight;
  }

  /** Parts of one transfer in flight. */
  partsOf(id: string): number {
    return this.parts.get(id) ?? 0;
  }

  /** 1 for the next transfer of its direction to start, 2 for the one after...; undefined once started, or while none waits its turn (or unknown here). */
  queuePlace(id: string): number | undefined {
    if (!this.places) {
      this.places = new Map();
      for (const name of Object.keys(this.lanes) as Lane[]) this.queue(name).forEach((t, i) => this.places!.set(t, i + 1));
    }
    return this.places.get(id);
  }

  /**
   * The transfers of a direction waiting their turn, first in line first: those not
   * started while another has. With none started, a transfer not started yet waits
   * for nothing but its own preparation (its files registered, its first blueprints),
   * which is no turn in a line.
   */
  queue(name: Lane): string[] {
    const lane = this.lanes[name];
    if (lane.started.size === 0) return [];
    return lane.transfers.filter((t) => !lane.started.has(t.id)).map((t) => t.id);
  }

  /** Called (at once, often) whenever the places of a direction's waiting transfers may have changed. */
  watchQueue(fn: (lane: Lane) => void): void {
    this.queueWatchers.push(fn);
  }

  /** Hands free slots out. Call when a transfer may have new parts ready (resumed, fresh blueprints, a retry timer fired). */
  wake(): void {
    while (this.inFlight() < this.limit) {
      const picked = this.pickLane();
      if (!picked) return;
      const [lane, transfer, task] = picked;
      lane.inFlight++;
      this.parts.set(transfer.id, this.partsOf(transfer.id) + 1);
      task
        .run()
        .catch((err) => this.onTaskError(transfer, err))
        .finally(() => {
          lane.inFlight--;
          const left = this.partsOf(transfer.id) - 1;
          if (left > 0) this.parts.set(transfer.id, left);
          else this.parts.delete(transfer.id);
          this.wake();
        });
    }
  }

  private queueChanged(lane: Lane): void {
    this.places = undefined;
    for (const fn of this.queueWatchers) fn(lane);
  }

  /** FIFO mode: gives free active places to the first in line. Answers whether any got one. */
  private admit(name: Lane): boolean {
    if (!this.rules.fifo) return false;
    const lane = this.lanes[name];
    let admitted = false;
    for (const t of lane.transfers) {
      if (lane.started.size >= this.rules.maxActive[name]) break;
      if (lane.started.has(t.id)) continue;
      lane.started.add(t.id);
      admitted = true;
    }
    if (admitted) this.queueChanged(name);
    return admitted;
  }

  /** At its cap of parts in flight (connections_per_transfer). */
  private full(t: Transfer): boolean {
    return this.rules.perTransfer !== undefined && this.partsOf(t.id) >= this.rules.perTransfer;
  }

  /** A part from the direction that did not get the last slot, else from the other. */
  private pickLane(): [LaneState, Transfer, PartTask] | undefined {
    const order: Lane[] = this.lastLane === 'upload' ? ['download', 'upload'] : ['upload', 'download'];
    for (const name of order) {
      const picked = this.pick(name);
      if (picked) {
        this.lastLane = name;
        return [this.lanes[name], ...picked];
      }
    }
    return undefined;
  }

  /**
   * Per priority, highest first: the first started transfer with a part ready, else the
   * first waiting one (which starts). In FIFO mode only those with an active place.
   */
  private pick(name: Lane): [Transfer, PartTask] | undefined {
    const lane = this.lanes[name];
    const list = lane.transfers;
    const passes = this.rules.fifo ? [true] : [true, false];
    for (let from = 0; from < list.length; ) {
      let to = from;
      while (to < list.length && list[to]!.priority === list[from]!.priority) to++;
      for (const startedPass of passes) {
        for (let i = from; i < to; i++) {
          const t = list[i]!;
          if (lane.started.has(t.id) !== startedPass || this.full(t)) continue;
          const task = t.nextPart();
          if (!task) continue;
          if (!startedPass) {
            lane.started.add(t.id);
            this.queueChanged(name);
          }
          return [t, task];
        }
      }
      from = to;
    }
    return undefined;
  }
}
