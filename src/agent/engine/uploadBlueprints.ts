// The fetching of part blueprints (the signed requests for each part) for the
// files of one upload run, a batch at a time as a file's parts use them up.
// Apart from the run (uploadJob.ts): it is one conversation with the service
// beside the parts, with its own retries, and the run only asks for it.
import { HostedApiError, type HostedHttp } from '../../client/http.js';
import { partBlueprints } from '../../client/uploads.js';
import type { UploadRow } from '../store/uploadStore.js';
import { retrying, type EngineTuning, type RetryScope } from './retry.js';
import type { Target } from './outages.js';
import type { FileTransfer } from './uploadFile.js';

/** What the fetcher needs of its run. */
export interface BlueprintRun {
  /** False once the run stopped: nothing more is started, and answers are dropped. */
  running(): boolean;
  track<T>(p: Promise<T>): Promise<T>;
  fail(err: unknown): void;
  /** New blueprints are in: parts may go. */
  wake(): void;
  /** The store no longer knows the file's multipart upload: it starts over. */
  restartFile(f: FileTransfer, why: unknown): void;
}

export class BlueprintFetcher {
  constructor(
    private readonly hosted: HostedHttp,
    private readonly tuning: EngineTuning,
    private readonly u: UploadRow,
    private readonly service: Target,
    private readonly scope: RetryScope & { signal: AbortSignal },
    private readonly run: BlueprintRun,
  ) {}

  private get call() {
    return { auth: { packageToken: this.u.package_token }, signal: this.scope.signal };
  }

  /** Fetches the file's next batch when it runs short and none is on its way. */
  maybeFetch(f: FileTransfer): void {
    const from = f.needsBlueprintsFrom(this.tuning.blueprintBatch);
    if (from === undefined) return;
    f.fetching = true;
    this.run.track(this.fetchBlueprints(f, from));
  }

  private async fetchBlueprints(f: FileTransfer, from: number): Promise<void> {
    const epoch = f.epoch;
    const count = Math.max(1, Math.min(this.tuning.blueprintBatch, f.lastPart - from + 1));
    try {
      const bps = await retrying(
        () => partBlueprints(this.hosted, this.u.package_id, f.row.file_id!, from - 1, count, f.row.s3_upload_id!, this.call),
        this.service,
        this.scope,
      );
      if (!this.run.running() || epoch !== f.epoch) return;
      bps.forEach((bp, i) => {
        if (!f.done.has(from + i)) f.blueprints.set(from + i, { bp, gen: f.gen });
      });
      f.fetching = false;
      this.run.wake();
    } catch (err) {
      if (!this.run.running() || epoch !== f.epoch) return;
      f.fetching = false;
      if (err instanceof HostedApiError && err.code === 'unknown_upload') return this.run.restartFile(f, err);
      this.run.fail(err);
    }
  }
}
