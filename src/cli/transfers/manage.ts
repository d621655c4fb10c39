// `ferry uploads ...` and `ferry downloads ...`: list, show, pause, resume,
// cancel and remove transfers the agent keeps; finalize uploads and make Links of them.
import { commandGroup, type Command } from '../command.js';
import type { Affected, AgentClient } from '../agentClient.js';
import type { UploadSummary } from '../../api/agent/uploads.js';
import type { DownloadSummary } from '../../api/agent/downloads.js';
import type { Direction, DownloadFilesPage, UploadFilesPage } from '../../api/agent/transfers.js';
import { transferName } from '../../ipc/transfers.js';
import { describeWaiting, formatBytes } from '../progress.js';
import { clientCommand, defined, int, str, table, UsageError, type Invocation } from './common.js';

type Rec = UploadSummary | DownloadSummary;
type FilesPage = UploadFilesPage | DownloadFilesPage;

/** Files `get` shows; `files` pages through the rest. */
const SHOWN = 200;

const idOf = (r: Rec) => ('upload_id' in r ? r.upload_id : r.download_id);
/** The state as people read it: "queued (3)" while it waits its turn, "canceled" rather than "error". */
function stateOf(r: Rec): string {
  if (r.canceled_at) return 'canceled';
  if (r.state === 'transferring' && r.queue_position !== undefined) return `queued (${r.queue_position})`;
  return r.waiting ? `${r.state} (waiting)` : r.state;
}
const pct = (r: Rec) => `${r.size > 0 ? Math.floor((r.progress / r.size) * 100) : r.state === 'complete' ? 100 : 0}%`;

function listing(records: Rec[], direction: Direction): string {
  if (records.length === 0) return `no ${direction}s`;
  return table(
    [`${direction.toUpperCase()} ID`, 'STATE', 'DONE', 'SIZE', 'NAME'],
    records.map((r) => [idOf(r), stateOf(r), pct(r), formatBytes(r.size), transferName(r)]),
  );
}

/** A page of files as a table, and how to see the next. */
function filesTable(direction: Direction, id: string, page: FilesPage, total: number): string {
  const lines = [table(['#', 'STATE', 'DONE', 'SIZE', 'PATH'], page.files.map((i) => [
    String(i.index + 1), i.state, `${i.size > 0 ? Math.floor((i.progress / i.size) * 100) : i.state === 'complete' ? 100 : 0}%`, formatBytes(i.size),
    i.path,
  ]))];
  // Files are numbered from 1 as the # column shows them; the API's indexes count from 0.
  if (page.next !== null) lines.push(`${total - page.next - 1} more: ferry ${direction}s files ${id} --after ${page.next + 1}`);
  return lines.join('\n');
}

function details(r: Rec, files: FilesPage): string {
  const lines = [
    `${'upload_id' in r ? 'upload' : 'download'} ${idOf(r)}: ${stateOf(r)}, ${pct(r)} (${formatBytes(r.progress)} of ${formatBytes(r.size)})`,
    `package: ${r.package_name} (${r.package_id})`,
  ];
  if ('dst_folder' in r) lines.push(`folder: ${r.dst_folder}`);
  if ('type' in r) lines.push(`type: ${r.type}`);
  lines.push(`created: ${r.created_at}, updated: ${r.updated_at}`);
  if (r.canceled_at) lines.push(`canceled: ${r.canceled_at}`);
  else if (r.error) lines.push(`error: ${r.error}`);
  if (r.queue_position !== undefined) lines.push(`queued: number ${r.queue_position} in line to start`);
  if (r.waiting) lines.push(`${describeWaiting(r.waiting)} since ${r.waiting.since}; last error: ${r.waiting.last_error}`);
  lines.push(`files: ${r.files_done} of ${r.file_count} complete`);
  if (files.files.length > 0) lines.push('', filesTable('upload_id' in r ? 'upload' : 'download', idOf(r), files, r.file_count));
  return lines.join('\n');
}

const affected = (verb: string, direction: Direction, a: Affected<Rec> | undefined) => {
  const list = a === undefined ? [] : Array.isArray(a) ? a : [a];
  if (list.length === 0) return `no ${direction}s ${verb}`;
  return list.map((r) => `${verb} ${direction} ${idOf(r)} (${stateOf(r)})`).join('\n');
};

const PAGE_FLAGS = { after: { type: 'string' }, limit: { type: 'string' } } as const;
/** `--after N`: after the file numbered N (from 1, as the # column), which is the API's index N - 1. */
const pageOf = (v: Invocation['values']) => {
  const after = int(v, 'after', 0);
  return defined({ after: after === undefined ? undefined : after - 1, limit: int(v, 'limit', 1) ?? SHOWN });
};

function oneId(positionals: string[], what: string, optional: boolean): string | undefined {
  if (positionals.length > 1) throw new UsageError(`name one ${what} id`);
  if (!optional && positionals.length === 0) throw new UsageError(`name the ${what} id`);
  return positionals[0];
}

const STATES_HELP = (states: string) => `--states LIST (comma-separated: ${states})`;

const group = (direction: Direction, help: string, actions: Record<string, Command>): Command => commandGroup(`${direction}s`, help, actions);

const UPLOADS_HELP = `usage: ferry uploads <action> [options]

actions:
  ls                      every upload the agent keeps
  get ID                  one upload, with its first 200 files (--json: the whole record)
  files ID [--after N] [--limit N]
                          its files, a page at a time (after the file numbered N)
  pause [ID]              pause one upload, or all
  resume [ID]             resume one upload, or all (also one in a recoverable error)
  cancel ID               stop an upload for good; it stays listed as canceled
  rm ID | rm ${STATES_HELP('transferring,paused,idle,complete,error')} | rm --all
                          forget uploads (uploaded Packages stay on the service)
  finalize ID             send an idle upload's Package
  link ID [--password P] [--access-limit N] [--expiry TIME] [--email E]
                          make a Link of a complete upload and print its address

Run "ferry uploads <action> --help" for its agent options (--agent, --api-key, --json).`;

const DOWNLOADS_HELP = `usage: ferry downloads <action> [options]

actions:
  ls                      every download the agent keeps
  get ID                  one download, with its first 200 files (--json: the whole record)
  files ID [--after N] [--limit N]
                          its files, a page at a time (after the file numbered N)
  pause [ID]              pause one download, or all
  resume [ID]             resume one download, or all (also one in a recoverable error)
  cancel ID               stop a download for good; it stays listed as canceled
                          (finished files stay, partly written ones are removed)
  rm ID [--remove-files] | rm ${STATES_HELP('transferring,paused,complete,error')} | rm --all
                          forget downloads; --remove-files also deletes what they wrote

Run "ferry downloads <action> --help" for its agent options (--agent, --api-key, --json).`;

function rmTarget(inv: Invocation, direction: Direction): { id?: string; states?: string } {
  const id = oneId(inv.positionals, direction, true);
  const states = str(inv.values, 'states');
  const all = inv.values.all === true;
  if ([id !== undefined, states !== undefined, all].filter(Boolean).length !== 1) {
    throw new UsageError(`name one ${direction} id, or --states LIST, or --all`);
  }
  return { id, states };
}

/** How one direction's transfer is read: the whole record, the summary, a page of files. */
function readerOf(client: AgentClient, direction: Direction) {
  return direction === 'upload'
    ? { record: client.getUpload, summary: client.uploadSummary, files: client.uploadFiles }
    : { record: client.getDownload, summary: client.downloadSummary, files: client.downloadFiles };
}

/** `get` (the summary and the first files; --json the whole record) and `files` (a page), the same both ways. */
function readActions(direction: Direction): Record<string, Command> {
  return {
    get: clientCommand(`${direction}s get`, `usage: ferry ${direction}s get ID`, {}, async ({ client, print, positionals, json }) => {
      const id = oneId(positionals, direction, false)!;
      const read = readerOf(client, direction);
      if (json) return void print('', await read.record(id));
      const [r, files] = await Promise.all([read.summary(id), read.files(id, { limit: SHOWN })]);
      print(details(r, files), r);
    }, true),
    files: clientCommand(`${direction}s files`, `usage: ferry ${direction}s files ID [--after N] [--limit N]`, PAGE_FLAGS, async ({ client, print, positionals, values }) => {
      const id = oneId(positionals, direction, false)!;
      const read = readerOf(client, direction);
      const [r, page] = await Promise.all([read.summary(id), read.files(id, pageOf(values))]);
      print(filesTable(direction, id, page, r.file_count), page);
    }, true),
  };
}

const uploadActions: Record<string, Command> = {
  ls: clientCommand('uploads ls', 'usage: ferry uploads ls', {}, async ({ client, print }) => {
    const all = await client.listUploads();
    print(listing(all, 'upload'), all);
  }),
  ...readActions('upload'),
  pause: clientCommand('uploads pause', 'usage: ferry uploads pause [ID]', {}, async ({ client, print, positionals }) => {
    const a = await client.pauseUploads(oneId(positionals, 'upload', true));
    print(affected('paused', 'upload', a), a);
  }, true),
  resume: clientCommand('uploads resume', 'usage: ferry uploads resume [ID]', {}, async ({ client, print, positionals }) => {
    const a = await client.resumeUploads(oneId(positionals, 'upload', true));
    print(affected('resumed', 'upload', a), a);
  }, true),
  cancel: clientCommand('uploads cancel', 'usage: ferry uploads cancel ID', {}, async ({ client, print, positionals }) => {
    const r = await client.cancelUpload(oneId(positionals, 'upload', false)!);
    print(affected('canceled', 'upload', r), r);
  }, true),
  rm: clientCommand('uploads rm', `usage: ferry uploads rm ID | --states LIST | --all`, { states: { type: 'string' }, all: { type: 'boolean' } }, async (inv) => {
    const a = await inv.client.deleteUploads(rmTarget(inv, 'upload'));
    inv.print(affected('removed', 'upload', a), a);
  }, true),
  finalize: clientCommand('uploads finalize', 'usage: ferry uploads finalize ID', {}, async ({ client, print, positionals }) => {
    const id = oneId(positionals, 'upload', false)!;
    const r = await client.finalizeUpload(id);
    print(`finalized upload ${id}`, r);
  }, true),
  link: clientCommand(
    'uploads link',
    'usage: ferry uploads link ID [--password P] [--access-limit N] [--expiry TIME (RFC 3339)] [--email E] [--inactive]',
    { password: { type: 'string' }, 'access-limit': { type: 'string' }, expiry: { type: 'string' }, email: { type: 'string' }, inactive: { type: 'boolean' } },
    async ({ client, print, positionals, values: v }) => {
      const id = oneId(positionals, 'upload', false)!;
      const body = defined({
        password: str(v, 'password'),
        access_limit: int(v, 'access-limit', 1),
        expiry: str(v, 'expiry'),
        email: str(v, 'email'),
        active: v.inactive === true ? false : undefined,
      });
      const link = await client.createLink(id, body);
      print(`${link.url}${link.locked ? '\n(password protected)' : ''}${link.expiry ? `\nexpires ${link.expiry}` : ''}`, link);
    },
    true,
  ),
};

const downloadActions: Record<string, Command> = {
  ls: clientCommand('downloads ls', 'usage: ferry downloads ls', {}, async ({ client, print }) => {
    const all = await client.listDownloads();
    print(listing(all, 'download'), all);
  }),
  ...readActions('download'),
  pause: clientCommand('downloads pause', 'usage: ferry downloads pause [ID]', {}, async ({ client, print, positionals }) => {
    const a = await client.pauseDownloads(oneId(positionals, 'download', true));
    print(affected('paused', 'download', a), a);
  }, true),
  resume: clientCommand('downloads resume', 'usage: ferry downloads resume [ID]', {}, async ({ client, print, positionals }) => {
    const a = await client.resumeDownloads(oneId(positionals, 'download', true));
    print(affected('resumed', 'download', a), a);
  }, true),
  cancel: clientCommand('downloads cancel', 'usage: ferry downloads cancel ID', {}, async ({ client, print, positionals }) => {
    const r = await client.cancelDownload(oneId(positionals, 'download', false)!);
    print(affected('canceled', 'download', r), r);
  }, true),
  rm: clientCommand(
    'downloads rm',
    'usage: ferry downloads rm ID [--remove-files] | --states LIST | --all',
    { states: { type: 'string' }, all: { type: 'boolean' }, 'remove-files': { type: 'boolean' } },
    async (inv) => {
      const a = await inv.client.deleteDownloads({ ...rmTarget(inv, 'download'), removeFiles: inv.values['remove-files'] === true });
      inv.print(affected('removed', 'download', a), a);
    },
    true,
  ),
};

export const uploads = group('upload', UPLOADS_HELP, uploadActions);
export const downloads = group('download', DOWNLOADS_HELP, downloadActions);
