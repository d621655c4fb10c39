// `ferry upload` (a Team upload: e-mailed to recipients, or a Link) and `ferry
// portal-upload`: start the upload in the agent, then follow it to its end.
import path from 'node:path';
import type { AgentClient, CreatedUpload } from '../agentClient.js';
import type { UploadLinkAnswer, UploadSummary } from '../../api/agent/uploads.js';
import { formatBytes, formatDuration, formatRate } from '../progress.js';
import { clientCommand, defined, Failure, int, list, required, str, UsageError, type Invocation, type Values } from './common.js';
import { followTransfer } from './follow.js';

const COMMON_HELP = `  --package-name N          the Package's name (default: the first path's name)
  --package-description D
  --chunk-size BYTES        bytes per part (default: the agent's --chunk-size)
  --priority N              higher goes first (default 0)
  --no-wait                 print the ids and return at once; the agent goes on`;

const UPLOAD_HELP = `usage: ferry upload PATH... --team-id TEAM [options]

Sends files and folders as one Package of a Team. With --recipients it is
e-mailed to them; without, it becomes a Link, printed at the end.

  --team-id TEAM            the Team to send from (see "ferry teams")
  --recipients a@x,b@y      e-mail recipients (comma-separated or repeated)
${COMMON_HELP}
  --password P              download password of the Package's Links
  --download-limit N        downloads allowed per Link
  --delete-after DAYS       days the Package is kept
  --unlimited-storage       keep the Package without expiry
  --teamspace-id ID         a teamspace of the Team
  --tag-id ID, --tag-name N the Package's tag: an existing one by id, or by name (made if new)
  --no-link                 do not make a Link at the end of a Link upload

Waits until the upload is complete (or idle, when the agent does not finalize
by itself), showing progress; Ctrl-C stops waiting, not the upload.
With --json: the POST answer with --no-wait; else the final upload record,
with "link" added when one was made.`;

const PORTAL_HELP = `usage: ferry portal-upload PATH... --subdomain S --sender-email E [options]

Sends files and folders to a Portal; no sign-in needed.

  --subdomain S             the Portal's subdomain
  --sender-email E          who sends
  --access-code C           the Portal's access code, if it has one
  --metadata KEY=VALUE      a metadata field (repeat for more)
  --accept-terms            accept the Portal's terms of service (read them on its page)
${COMMON_HELP}`;

const common = {
  'package-name': { type: 'string' },
  'package-description': { type: 'string' },
  'chunk-size': { type: 'string' },
  priority: { type: 'string' },
  'no-wait': { type: 'boolean' },
} as const;

function paths(positionals: string[]): string[] {
  if (positionals.length === 0) throw new UsageError('name at least one file or folder to send');
  // The agent may run elsewhere in the file system tree: it gets absolute paths.
  return positionals.map((p) => path.resolve(p));
}

function commonBody(v: Values) {
  return defined({
    package_name: str(v, 'package-name'),
    package_description: str(v, 'package-description'),
    chunk_size: int(v, 'chunk-size', 1),
    priority: int(v, 'priority'),
  });
}

const DONE = new Set(['complete', 'error']);

/** Follows an upload to complete or error (or idle, when nothing will finalize it). */
async function waitForUpload(client: AgentClient, id: string): Promise<{ record: UploadSummary; seconds: number }> {
  const autoFinalize = (await client.about()).settings.auto_finalize;
  const { record, bar } = await followTransfer<UploadSummary>({
    client, direction: 'upload', id, get: () => client.uploadSummary(id),
    isDone: (r) => DONE.has(r.state) || (r.state === 'idle' && !autoFinalize),
  });
  bar.finish();
  return { record, seconds: bar.elapsedSeconds() };
}

function summary(r: UploadSummary, seconds: number): string {
  const files = r.file_count;
  const speed = seconds > 0 ? `, ${formatRate(r.size / seconds)}` : '';
  return `${files} item${files === 1 ? '' : 's'}, ${formatBytes(r.size)} in ${formatDuration(seconds)}${speed}`;
}

function failed(r: UploadSummary): never {
  if (r.canceled_at) throw new Failure(`upload ${r.upload_id} was canceled`);
  throw new Failure(`upload ${r.upload_id} failed: ${r.error ?? 'unknown error'} (it may resume: ferry uploads resume ${r.upload_id})`);
}

export const upload = clientCommand(
  'upload',
  UPLOAD_HELP,
  {
    ...common,
    'team-id': { type: 'string' },
    recipients: { type: 'string', multiple: true },
    password: { type: 'string' },
    'download-limit': { type: 'string' },
    'delete-after': { type: 'string' },
    'unlimited-storage': { type: 'boolean' },
    'teamspace-id': { type: 'string' },
    'tag-id': { type: 'string' },
    'tag-name': { type: 'string' },
    'no-link': { type: 'boolean' },
  },
  async ({ values: v, positionals, client, json, print }: Invocation) => {
    const recipients = list(v, 'recipients');
    const body = defined({
      team_id: required(v, 'team-id'),
      paths: paths(positionals),
      recipients,
      ...commonBody(v),
      password: str(v, 'password'),
      download_limit: int(v, 'download-limit', 0),
      delete_after: int(v, 'delete-after', 1),
      unlimited_storage: v['unlimited-storage'] === true ? true : undefined,
      teamspace_id: str(v, 'teamspace-id'),
      tag: str(v, 'tag-id') !== undefined || str(v, 'tag-name') !== undefined ? defined({ id: str(v, 'tag-id'), name: str(v, 'tag-name') }) : undefined,
    });
    const created: CreatedUpload = await client.createUpload(body);
    if (v['no-wait'] === true) {
      print(`upload ${created.upload_id} started (package ${created.package_id})`, created);
      return 0;
    }
    if (!json) console.error(`upload ${created.upload_id} started (package ${created.package_id})`);
    const { record, seconds } = await waitForUpload(client, created.upload_id);
    if (record.state === 'error') failed(record);
    // --json prints the whole record, files and all, as GET /uploads/{id} answers it.
    const answer = json ? await client.getUpload(record.upload_id) : record;
    if (record.state === 'idle') {
      print(
        `all files are uploaded (${summary(record, seconds)}); package ${record.package_id} waits to be finalized: ferry uploads finalize ${record.upload_id}`,
        answer,
      );
      return 0;
    }
    let link: UploadLinkAnswer | undefined;
    if (!recipients && v['no-link'] !== true) {
      try {
        link = await client.createLink(record.upload_id, {});
      } catch (err) {
        throw new Failure(`upload ${record.upload_id} is complete (package ${record.package_id}), but making its Link failed: ${(err as Error).message}`);
      }
    }
    const lines = [`upload complete: ${summary(record, seconds)}`, `package: ${record.package_id}`];
    if (recipients) lines.push(`sent to: ${recipients.join(', ')}`);
    if (link) lines.push(`link: ${link.url}`);
    print(lines.join('\n'), link ? { ...answer, link } : answer);
    return 0;
  },
  true,
);

function metadata(v: Values): Record<string, string> | undefined {
  const pairs = list(v, 'metadata');
  if (!pairs) return undefined;
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`--metadata takes KEY=VALUE, got "${p}"`);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

export const portalUpload = clientCommand(
  'portal-upload',
  PORTAL_HELP,
  {
    ...common,
    subdomain: { type: 'string' },
    'sender-email': { type: 'string' },
    'access-code': { type: 'string' },
    metadata: { type: 'string', multiple: true },
    'accept-terms': { type: 'boolean' },
  },
  async ({ values: v, positionals, client, json, print }: Invocation) => {
    const body = defined({
      subdomain: required(v, 'subdomain'),
      sender_email: required(v, 'sender-email'),
      paths: paths(positionals),
      access_code: str(v, 'access-code'),
      metadata: metadata(v),
      accept_terms: v['accept-terms'] === true ? true : undefined,
      ...commonBody(v),
    });
    const created = await client.createPortalUpload(body);
    if (v['no-wait'] === true) {
      print(`portal upload ${created.upload_id} started (package ${created.package_id})`, created);
      return 0;
    }
    if (!json) console.error(`portal upload ${created.upload_id} started (package ${created.package_id})`);
    const { record, seconds } = await waitForUpload(client, created.upload_id);
    if (record.state === 'error') failed(record);
    const done = record.state === 'complete'
      ? `delivered to the Portal ${body.subdomain}: ${summary(record, seconds)}`
      : `all files are uploaded (${summary(record, seconds)}); finalize with: ferry uploads finalize ${record.upload_id}`;
    print(`${done}\npackage: ${record.package_id}`, json ? await client.getUpload(record.upload_id) : record);
    return 0;
  },
  true,
);
