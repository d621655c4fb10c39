// One scheduler for every transfer, with one limit of parts in flight for all of
// them (--concurrency). Each direction (uploads, downloads) has its own queue, and
// when both have parts ready the free slots go to them in turn, so a long upload
// never holds a download back for more than a part. Within a direction, higher
// priority goes first and transfers of equal priority take turns part by part.

export type Lane = 'upload' | 'download';

export interface PartTask {
  /** Runs one part; must settle (resolve or reject) once `signal` aborts. */
  run(): Promise<void>;
}

export interface Transfer {
  readonly id: string;
  readonly lane: Lane;
  readonly priority: number;
  /** The next part ready to go, or undefined when none is ready right now. */
  nextPart(): PartTask | undefined;
}

interface LaneState {
  transfers: Transfer[];
  inFlight: number;
  /** Index of the transfer served last, for round-robin among equals. */
  cursor: number;
}

export class Scheduler {
  private readonly lanes: Record<Lane, LaneState> = {
    upload: { transfers: [], inFlight: 0, cursor: -1 },
    download: { transfers: [], inFlight: 0, cursor: -1 },
  };
  /** The direction that got the last slot: the other one is asked first for the next. */
  private lastLane: Lane = 'download';

  constructor(
    private limit: number,
    private readonly onTaskError: (transfer: Transfer, err: unknown) => void = () => {},
  ) {}

  /** Parts in flight at most from now on: more start at once, or fewer as those in flight end. */
  setLimit(limit: number): void {
    this.limit = limit;
    this.wake();
  }

  add(t: Transfer): void {
    const lane = this.lanes[t.lane];
    if (!lane.transfers.some((x) => x.id === t.id)) lane.transfers.push(t);
    this.wake();
  }

  /** Stops giving the transfer new slots; its parts in flight finish or abort on their own. */
  remove(id: string): void {
    for (const lane of Object.values(this.lanes)) lane.transfers = lane.transfers.filter((t) => t.id !== id);
  }

  /** Parts in flight in one direction, or in all. */
  inFlight(lane?: Lane): number {
    return lane ? this.lanes[lane].inFlight : this.lanes.upload.inFlight + this.lanes.download.inFlight;
  }

  /** Hands free slots out. Call when a transfer may have new parts ready (resumed, fresh blueprints, a retry timer fired). */
  wake(): void {
    while (this.inFlight() < this.limit) {
      const picked = this.pickLane();
      if (!picked) return;
      const [lane, transfer, task] = picked;
      lane.inFlight++;
      task
        .run()
        .catch((err) => this.onTaskError(transfer, err))
        .finally(() => {
          lane.inFlight--;
          this.wake();
        });
    }
  }

  /** A part from the direction that did not get the last slot, else from the other. */
  private pickLane(): [LaneState, Transfer, PartTask] | undefined {
    const order: Lane[] = this.lastLane === 'upload' ? ['download', 'upload'] : ['upload', 'download'];
    for (const name of order) {
      const picked = this.pick(this.lanes[name]);
      if (picked) {
        this.lastLane = name;
        return [this.lanes[name], ...picked];
      }
    }
    return undefined;
  }

  /** Highest priority first; among equals, the next one after the last served that has a part ready. */
  private pick(lane: LaneState): [Transfer, PartTask] | undefined {
    const n = lane.transfers.length;
    if (n === 0) return undefined;
    const priorities = [...new Set(lane.transfers.map((t) => t.priority))].sort((a, b) => b - a);
    for (const p of priorities) {
      for (let step = 1; step <= n; step++) {
        const i = (lane.cursor + step) % n;
        const t = lane.transfers[i]!;
        if (t.priority !== p) continue;
        const task = t.nextPart();
        if (task) {
          lane.cursor = i;
          return [t, task];
        }
      }
    }
    return undefined;
  }
}
