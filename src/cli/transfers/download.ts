// `ferry download URL`: fetch a Package from its Link into a folder, following
// the download to its end.
import path from 'node:path';
import type { DownloadSummary } from '../../api/agent/downloads.js';
import type { DownloadFilesPage } from '../../api/agent/transfers.js';
import type { AgentClient } from '../agentClient.js';
import { formatBytes, formatDuration, formatRate } from '../progress.js';
import { clientCommand, defined, Failure, int, list, str, UsageError, type Invocation } from './common.js';
import { followTransfer } from './follow.js';

const HELP = `usage: ferry download URL [options]

Downloads the Package behind a Link ({link_url}/{link_id}?secret=...) and
rebuilds the sender's folders.

  --dst-folder DIR          where to put it (default: the current directory)
  --password P              the Link's password, if it has one
  --file-ids a,b            only these entries of the Package (a folder's id takes all beneath it)
  --no-package-folder       write into DIR itself, not into DIR/<package name>
  --no-bypass-quarantine    refuse a Package with flagged files instead of skipping them
  --chunk-size BYTES        bytes per ranged request
  --priority N              higher goes first (default 0)
  --user-id UID, --group-id GID
                            owner of the files written (needs the rights to give them away)
  --no-wait                 print the id and return at once; the agent goes on

Waits until the download is complete, showing progress; Ctrl-C stops waiting,
not the download. With --json: the POST answer with --no-wait, else the final
download record.`;

/** `p` up `levels` folders. */
const up = (p: string, levels: number) => {
  for (let i = 0; i < levels; i++) p = path.dirname(p);
  return p;
};

/**
 * The path people open: the Package's one top-level entry (a folder or a file)
 * when it has exactly one, else the folder its tree was rebuilt in. Each file's
 * top-level entry is its local path, up as many levels as the sender's path is
 * deep; the pages are read until a second top-level entry shows (a Package of
 * one folder is read whole, a page of 5,000 files at a time).
 */
async function savedIn(client: AgentClient, r: DownloadSummary): Promise<string> {
  let top: string | undefined;
  for (let after = -1; ; ) {
    const page = await client.downloadFiles(r.download_id, { after, limit: 5000 });
    for (const i of page.files) {
      if (!i.local_path) continue;
      const own = up(i.local_path, i.path.split('/').filter(Boolean).length - 1);
      if (top === undefined) top = own;
      else if (own !== top) return path.dirname(top);
    }
    if (page.next === null) return top ?? r.dst_folder;
    after = page.next;
  }
}

/** The entries skipped (flagged by the scan, say): a complete download's entries not complete, read a page at a time. */
async function skippedOf(client: AgentClient, r: DownloadSummary): Promise<DownloadFilesPage['files']> {
  const out: DownloadFilesPage['files'] = [];
  for (let after = -1; r.files_done + out.length < r.file_count; ) {
    const page = await client.downloadFiles(r.download_id, { after, limit: 5000 });
    out.push(...page.files.filter((i) => i.state === 'skipped'));
    if (page.next === null) break;
    after = page.next;
  }
  return out;
}

export const download = clientCommand(
  'download',
  HELP,
  {
    'dst-folder': { type: 'string' },
    password: { type: 'string' },
    'file-ids': { type: 'string', multiple: true },
    'no-package-folder': { type: 'boolean' },
    'no-bypass-quarantine': { type: 'boolean' },
    'chunk-size': { type: 'string' },
    priority: { type: 'string' },
    'user-id': { type: 'string' },
    'group-id': { type: 'string' },
    'no-wait': { type: 'boolean' },
  },
  async ({ values: v, positionals, client, json, print }: Invocation) => {
    if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'name the Link URL to download' : 'name one Link URL');
    const url = positionals[0]!;
    if (!/^https?:\/\//i.test(url)) throw new UsageError(`"${url}" is not a Link URL (http://... or https://...)`);
    const body = defined({
      url,
      dst_folder: path.resolve(str(v, 'dst-folder') ?? '.'),
      password: str(v, 'password'),
      file_ids: list(v, 'file-ids'),
      create_package_folder: v['no-package-folder'] === true ? false : undefined,
      bypass_package_quarantine: v['no-bypass-quarantine'] === true ? false : undefined,
      chunk_size: int(v, 'chunk-size', 1),
      priority: int(v, 'priority'),
      user_id: int(v, 'user-id', 0),
      group_id: int(v, 'group-id', 0),
    });
    const { download_id: id } = await client.createDownload(body);
    if (v['no-wait'] === true) {
      print(`download ${id} started`, { download_id: id });
      return 0;
    }
    if (!json) console.error(`download ${id} started`);
    const { record, bar } = await followTransfer<DownloadSummary>({
      client, direction: 'download', id, get: () => client.downloadSummary(id),
      isDone: (r) => r.state === 'complete' || r.state === 'error',
    });
    bar.finish();
    if (record.canceled_at) throw new Failure(`download ${id} was canceled`);
    if (record.state === 'error') throw new Failure(`download ${id} failed: ${record.error ?? 'unknown error'} (it may resume: ferry downloads resume ${id})`);
    const seconds = bar.elapsedSeconds();
    const skipped = await skippedOf(client, record);
    const lines = [
      `download complete: ${record.package_name}, ${record.files_done} item(s), ${formatBytes(record.size)} in ${formatDuration(seconds)}${seconds > 0 ? `, ${formatRate(record.size / seconds)}` : ''}`,
      `saved in: ${await savedIn(client, record)}`,
      ...skipped.map((i) => `skipped: ${i.path}${i.error ? ` (${i.error.replace(/^skipped: /, '')})` : ''}`),
    ];
    // --json prints the whole record, files and all, as GET /downloads/{id} answers it.
    print(lines.join('\n'), json ? await client.getDownload(id) : record);
    return 0;
  },
  true,
);
