// The table of subcommands. Each module loads only when its command runs, so a
// quick command does not pay for the AWS SDK and the servers.
import type { Command } from './command.js';

export interface CommandEntry {
  summary: string;
  load(): Promise<Command>;
}

export const commands: Record<string, CommandEntry> = {
  start: {
    summary: 'run Ferry on this machine (hosted service and S3 store), set up on first run',
    load: async () => (await import('./start.js')).start,
  },
  serve: { summary: 'run the hosted service and its embedded S3 store', load: async () => (await import('./serve.js')).serve },
  objectstore: { summary: 'run the embedded S3-compatible object store alone', load: async () => (await import('./objectstore.js')).objectstore },
  admin: { summary: 'manage Teams, users, roles and API keys in a data dir', load: async () => (await import('./admin.js')).admin },
};
