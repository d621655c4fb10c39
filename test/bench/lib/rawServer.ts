// Child process of rawLimit.ts: runs the raw loopback server and reports its port.
import { serveRaw } from './loopback.js';

const server = await serveRaw();
process.send!({ port: (server.address() as { port: number }).port });
const stop = (): void => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
// If the benchmark dies, never leave the server behind.
process.on('disconnect', stop);
