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
  agent: { summary: 'run the local transfer agent (REST API on localhost)', load: async () => (await import('./agent.js')).agent },
  upload: { summary: 'send files and folders as a Team Package (through the agent)', load: async () => (await import('./transfers/upload.js')).upload },
  'portal-upload': { summary: 'send files and folders to a Portal (through the agent)', load: async () => (await import('./transfers/upload.js')).portalUpload },
  download: { summary: 'download a Package from its Link (through the agent)', load: async () => (await import('./transfers/download.js')).download },
  uploads: { summary: 'list, pause, resume, remove, finalize uploads; make Links', load: async () => (await import('./transfers/manage.js')).uploads },
  downloads: { summary: 'list, pause, resume, remove downloads', load: async () => (await import('./transfers/manage.js')).downloads },
  automations: {
    summary: 'watch folders and Portal downloads: ls, get, packages, add, set, rm, enable, disable',
    load: async () => (await import('./transfers/automations.js')).automations,
  },
  gateway: { summary: 'storage gateways: register, ls, update, unregister a folder the service delivers to or reads from', load: async () => (await import('./transfers/gateway.js')).gateway },
  disks: { summary: 'the disks the agent reads and writes: ls, status, set (priority, reader and writer limits)', load: async () => (await import('./transfers/disks.js')).disks },
  login: { summary: 'sign the agent in', load: async () => (await import('./transfers/account.js')).login },
  logout: { summary: 'sign the agent out', load: async () => (await import('./transfers/account.js')).logout },
  teams: { summary: 'the signed-in user\'s Teams', load: async () => (await import('./transfers/account.js')).teams },
  settings: { summary: 'print the agent\'s settings, or change them: ferry settings set upload-rate-limit=20MiB', load: async () => (await import('./transfers/settings.js')).settings },
  about: { summary: 'the agent\'s version, build and settings', load: async () => (await import('./transfers/account.js')).about },
  diagnostics: { summary: 'versions, settings, reachability, free space, recent problems; --bundle writes a support bundle', load: async () => (await import('./transfers/diagnostics.js')).diagnostics },
};
