// A worker thread that starts on first use and keeps the process alive only
// while it has work. Both of Ferry's helper threads (the agent's whole-file
// reader, the MD5 workers) are used now and then by long-running processes:
// an idle one must not hold a CLI or a test run open, and one that dies (an
// exception, the process's shutdown) must fail the work it had instead of
// leaving it waiting forever, and be started again by the next use.
import { Worker, type WorkerOptions } from 'node:worker_threads';

export interface WorkerHandlers {
  message(m: unknown): void;
  /** The worker died (error or exit): the work given to it will never be answered. */
  dead(err: Error): void;
}

export class LazyWorker {
  private worker: Worker | undefined;
  private jobs = 0;

  constructor(
    private readonly source: string,
    private readonly options: WorkerOptions,
    private readonly handlers: WorkerHandlers,
  ) {}

  /** The worker, started if need be, with one more job counted: it keeps the process alive until end(). */
  begin(): Worker {
    const w = this.started();
    if (this.jobs++ === 0) w.ref();
    return w;
  }

  /** A job counted by begin() is answered (or failed): with none left, the worker lets the process exit. */
  end(): void {
    if (this.jobs > 0 && --this.jobs === 0) this.worker?.unref();
  }

  /** Stops the worker; its jobs are the caller's to fail. The next begin() starts a new one. */
  terminate(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.jobs = 0;
    return w ? w.terminate().then(() => undefined) : Promise.resolve();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(this.source, { ...this.options, eval: true });
    w.on('message', (m: unknown) => this.handlers.message(m));
    const dead = (err: Error): void => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.jobs = 0;
      this.handlers.dead(err);
    };
    w.on('error', dead);
    w.on('exit', (code) => dead(new Error(`worker thread exited (${code})`)));
    w.unref(); // after the listeners: adding a 'message' listener refs the worker again
    this.worker = w;
    return w;
  }
}
