// The agent's own process in the desktop app (an Electron utilityProcess, whose
// parent port is process.parentPort) and in tests (a Node child process with an
// IPC channel). Settings come as FERRY_AGENT_FLAGS (JSON of `ferry agent`'s
// flags); the FERRY_AGENT_* variables and config.yml apply as for `ferry agent`.
// The service on this computer, when the settings ask for it, runs here too, with
// FERRY_SERVE_FLAGS (JSON of `ferry serve`'s flags). A change of settings that
// needs a new start exits with RESTART_EXIT, and main starts the process again.
import pino from 'pino';
import { resolveAgentConfig } from '../agent/config.js';
import { startAgentRun } from './runAgent.js';
import { hostAgent } from '../agent/ui/agentHost.js';
import { RESTART_EXIT, type Port } from '../ipc/port.js';

interface ElectronParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (e: { data: unknown }) => void): void;
  off(event: 'message', listener: (e: { data: unknown }) => void): void;
}

function parentPort(): Port {
  const electron = (process as { parentPort?: ElectronParentPort }).parentPort;
  if (electron) {
    return {
      post: (m) => electron.postMessage(m),
      onMessage(listener) {
        const h = (e: { data: unknown }) => listener(e.data);
        electron.on('message', h);
        return () => electron.off('message', h);
      },
    };
  }
  if (process.send) {
    return {
      post: (m) => void process.send!(m),
      onMessage(listener) {
        process.on('message', listener);
        return () => void process.off('message', listener);
      },
    };
  }
  throw new Error('no parent to talk to: the desktop app (or a test) starts this with a port');
}

const flags = JSON.parse(process.env.FERRY_AGENT_FLAGS ?? '{}') as Record<string, string | boolean>;
const serveFlags = JSON.parse(process.env.FERRY_SERVE_FLAGS ?? '{}') as Record<string, string | boolean>;
const port = parentPort();
let log = pino();
try {
  log = pino({ level: resolveAgentConfig(flags).logLevel });
  const run = await startAgentRun({ flags, serveFlags, log });
  const hosted = hostAgent(port, run.agent, log);
  // A parent that went away (crashed, killed) leaves no agent behind: it stops as on shutdown.
  process.once('disconnect', () => void hosted.close());
  const why = await hosted.stopped;
  await run.service?.close();
  process.exit(why === 'restart' ? RESTART_EXIT : 0);
} catch (err) {
  port.post({ kind: 'failed', message: (err as Error).message });
  log.error({ err }, 'the agent could not start');
  process.exit(1);
}
