// One scheduler for every transfer. Each direction (uploads, downloads) has its
// own queue and its own limit of parts in flight, so a long upload never holds a
// download back. Within a direction, higher priority goes first and transfers of
// equal priority take turns part by part.

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

  constructor(
    private readonly limit: number,
    private readonly onTaskError: (transfer: Transfer, err: unknown) => void = () => {},
  ) {}

  add(t: Transfer): void {
    const lane = this.lanes[t.lane];
    if (!lane.transfers.some((x) => x.id === t.id)) lane.transfers.push(t);
    this.pump(t.lane);
  }

  /** Stops giving the transfer new slots; its parts in flight finish or abort on their own. */
  remove(id: string): void {
    for (const lane of Object.values(this.lanes)) lane.transfers = lane.transfers.filter((t) => t.id !== id);
  }

  /** Call when a transfer may have new parts ready (resumed, fresh blueprints, a retry timer fired). */
  wake(lane?: Lane): void {
    if (lane) this.pump(lane);
    else {
      this.pump('upload');
      this.pump('download');
    }
  }

  inFlight(lane: Lane): number {
    return this.lanes[lane].inFlight;
  }

  private pump(name: Lane): void {
    const lane = this.lanes[name];
    while (lane.inFlight < this.limit) {
      const picked = this.pick(lane);
      if (!picked) return;
      const [transfer, task] = picked;
      lane.inFlight++;
      task
        .run()
        .catch((err) => this.onTaskError(transfer, err))
        .finally(() => {
          lane.inFlight--;
          this.pump(name);
        });
    }
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
