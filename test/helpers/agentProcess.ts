// The desktop app's agent process (src/cli/agentProcess.ts) as main's supervisor
// starts it, forked over Node's IPC channel instead of Electron's port.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { AgentChild } from '../../main/supervisor.js';

const root = path.resolve(import.meta.dirname, '../..');

/** Forks the agent's process with `ferry agent`'s flags; each child goes into `children`, for the test to kill what is left. */
export function forkAgentProcess(flags: Record<string, string>, children: ChildProcess[]): AgentChild {
  const child = fork(path.join(root, 'src', 'cli', 'agentProcess.ts'), [], {
    execArgv: ['--require', path.join(root, 'bin', 'threadPool.cjs'), '--import', 'tsx'],
    env: { ...process.env, FERRY_AGENT_FLAGS: JSON.stringify(flags) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  return {
    port: {
      post: (m) => void child.send(m),
      onMessage(listener) {
        child.on('message', listener);
        return () => void child.off('message', listener);
      },
    },
    onExit: (l) => void child.once('exit', (code) => l(code)),
    kill: () => void child.kill('SIGKILL'),
  };
}
