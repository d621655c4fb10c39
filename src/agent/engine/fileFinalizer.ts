// The file finalizes of one upload run. The first goes alone; while requests
// are under way the next ones gather and then go together (`finalize_files`,
// Ferry's addition to the hosted API), so an idle run waits for nothing and a
// busy one sends one request for many small files. Each file gets the outcome
// its own finalize would have had. A service without the batch route (404 or
// 405) gets one finalize per file from then on, as the spec has it.
import { HostedApiError, type HostedHttp } from '../../client/http.js';
import { finalizeFile, finalizeFiles } from '../../client/uploads.js';
import { MAX_FILES_PER_FINALIZE, type FinalizeFileBody } from '../../api/hosted/files.js';
import { isTransientStatus, retrying, type RetryPolicy } from './retry.js';

/** Requests under way at once: one being answered while the next gathers files. */
const IN_FLIGHT = 2;

interface Waiting {
  fileId: string;
  body: FinalizeFileBody;
  done(): void;
  failed(err: unknown): void;
}

export class FileFinalizer {
  private queue: Waiting[] = [];
  private inFlight = 0;
  private batches = true;

  constructor(
    private readonly hosted: HostedHttp,
    private readonly packageId: string,
    private readonly packageToken: string,
    private readonly policy: RetryPolicy,
    private readonly signal: AbortSignal,
  ) {}

  /** Resolves once the service has finalized the file; rejects with what its finalize would have failed with. */
  finalize(fileId: string, body: FinalizeFileBody): Promise<void> {
    return new Promise((done, failed) => {
      this.queue.push({ fileId, body, done, failed });
      this.pump();
    });
  }

  private get call() {
    return { auth: { packageToken: this.packageToken }, signal: this.signal };
  }

  private pump(): void {
    while (this.inFlight < IN_FLIGHT && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_FILES_PER_FINALIZE);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    let alone = batch;
    if (this.batches && batch.length > 1) {
      try {
        alone = await this.together(batch);
      } catch (err) {
        if (!(err instanceof HostedApiError && (err.status === 404 || err.status === 405))) {
          for (const w of batch) w.failed(err);
          return;
        }
        this.batches = false;
      }
    }
    await Promise.all(
      alone.map((w) =>
        retrying(() => finalizeFile(this.hosted, this.packageId, w.fileId, w.body, this.call), this.policy, this.signal).then(w.done, w.failed),
      ),
    );
  }

  /** One request for the batch; answers the files worth another try on their own (a transient failure). */
  private async together(batch: Waiting[]): Promise<Waiting[]> {
    const files = batch.map((w) => ({ file_id: w.fileId, ...w.body }));
    const { results } = await retrying(() => finalizeFiles(this.hosted, this.packageId, { files }, this.call), this.policy, this.signal);
    const again: Waiting[] = [];
    batch.forEach((w, i) => {
      const o = results[i];
      if (!o || o.file_id !== w.fileId || isTransientStatus(o.status)) again.push(w);
      else if (o.status < 300) w.done();
      else w.failed(new HostedApiError(o.status, o.code ?? 'http_error', o.message ?? `HTTP ${o.status}`));
    });
    return again;
  }
}
