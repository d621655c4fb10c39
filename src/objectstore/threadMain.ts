// The store's thread (see thread.ts): starts the store with the options it was
// given, answers the service's control calls, and stops when asked to.
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { S3Error } from './errors.js';
import { startObjectStore } from './index.js';
import type { CallMessage, ErrorData, FromStore, ThreadOptions } from './threadProtocol.js';

const port = parentPort!;
const send = (m: FromStore) => port.postMessage(m);
const { logLevel, reportParts, ...opts } = workerData as ThreadOptions;

const errorData = (err: unknown): ErrorData =>
  err instanceof S3Error
    ? { s3: true, code: err.code, message: err.message }
    : { s3: false, code: (err as NodeJS.ErrnoException | undefined)?.code, message: err instanceof Error ? err.message : String(err) };

try {
  const store = await startObjectStore({
    ...opts,
    logger: pino({ level: logLevel }).child({ component: 'objectstore' }),
    ...(reportParts ? { onPartStored: (part) => send({ type: 'stored', part }) } : {}),
  });
  const ops = { ...store.local, close: () => store.close() } as Record<CallMessage['op'], (...a: unknown[]) => Promise<unknown>>;
  port.on('message', (m: CallMessage) => {
    ops[m.op](...m.args).then(
      (value) => send({ type: 'answer', id: m.id, ok: true, value }),
      (err: unknown) => send({ type: 'answer', id: m.id, ok: false, error: errorData(err) }),
    );
  });
  send({ type: 'ready', url: store.url, port: store.port });
} catch (err) {
  send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
}
