// The agent's own process in the desktop app (an Electron utilityProcess, whose
// parent port is process.parentPort) and in tests (a Node child process with an
// IPC channel). Settings come as FERRY_AGENT_FLAGS (JSON of `ferry agent`'s
// flags); the FERRY_AGENT_* variables and config.yml apply as for `ferry agent`.
import pino from 'pino';
import { resolveAgentConfig } from '../agent/config.js';
import { hostAgent } from './agentHost.js';
import type { Port } from './port.js';

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

const config = resolveAgentConfig(JSON.parse(process.env.FERRY_AGENT_FLAGS ?? '{}') as Record<string, string | boolean>);
const log = pino({ level: config.logLevel });
try {
  const hosted = await hostAgent(parentPort(), config, log);
  // A parent that went away (crashed, killed) leaves no agent behind: it stops as on shutdown.
  process.once('disconnect', () => void hosted.close());
  await hosted.stopped;
  process.exit(0);
} catch (err) {
  log.error({ err }, 'the agent could not start');
  process.exit(1);
}
