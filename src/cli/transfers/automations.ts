// `ferry automations ...`: the agent's Automations routes from the command line:
// ls, get, packages, add, set, rm, enable, disable. Flags are the fields'
// names in kebab-case (the spec's command-line names for the watch folders'
// optional fields); a field that does not apply to the automation's kind is a
// usage error, not silently dropped.
import path from 'node:path';
import { AUTOMATION_TYPES, UPDATE_BODIES, type AutomationFields, type AutomationPackage, type AutomationRecord, type AutomationType } from '../../api/agent/automations.js';
import { commandGroup, type Command, type OptionSpec } from '../command.js';
import { clientCommand, int, list, str, table, UsageError, type Values } from './common.js';

const HELP = `usage: ferry automations <action> [options]

actions:
  ls                      every automation, with its last run and last error
  get ID                  one automation: its fields, then the Packages it sent or fetched
  packages ID             the Packages it sent or fetched
  add TYPE --name N ...   a new automation; TYPE is one of:
                            portal_download       fetch what one Portal receives
                            all_portals_download  fetch what every Portal of a Team receives
                            team_upload           a watch folder sending to e-mail recipients or as Links
                            portal_upload         a watch folder sending to a Portal
  set ID [options]        change the fields given; the others stay
  rm ID                   delete it (what it started goes on as ordinary transfers)
  enable ID, disable ID   switch it on or off

Portal downloads:
  --portal-subdomain S    (portal_download) the Portal, one of your Teams'
  --team-id TEAM          (all_portals_download) every Portal of this Team
  --dst-folder DIR        where Packages are written (made when missing)
  --effective-time TIME   fetch Packages finalized from then on (RFC 3339; default: now)
  --no-package-folder     write each Package's files straight into the folder
  --portal-subfolder      (all_portals_download) a folder per Portal, named after it
  --download-priority N   higher goes first

Watch folders (each subfolder of --path is sent as one Package once it has
not changed for --timeout minutes):
  --path DIR              the folder to watch
  --timeout MIN           minutes of quiet before a subfolder goes (fractions allowed)
  --team-id TEAM --recipients a@x,b@y
                          (team_upload) the Team, and whom to e-mail (none: each
                          Package gets a Link, listed by "ferry automations packages ID")
  --subdomain S --sender-email E [--access-code C]
                          (portal_upload) the Portal, who sends, its access code
  --blacklist GLOB        leave out what matches (repeat for more), e.g. '*.tmp'
  --upload-loose-files    send files at the top of --path too, each as a Package
  --growing-files         send a file still being written as it grows; it is
                          finalized once its size is still for --timeout
  --delete-files-after-upload
                          delete each file once its Package is complete
  --package-name-suffix S added to the subfolder's name to name the Package
  --message M             the Package's description
  --priority N            higher goes first
  (team_upload) --delete-after DAYS, --download-limit N, --download-password P,
                --tag-id ID, --tag-name N, --unlimited-storage

Both:
  --name N                what the automation is called
  --disabled              (add) create it switched off
  --no-upload-loose-files, --no-growing-files, --no-delete-files-after-upload, --package-folder,
  --no-portal-subfolder, --no-unlimited-storage
                          (set) switch those back

Run "ferry automations <action> --help" for its agent options (--agent, --api-key, --json).`;

const OPTIONS = {
  name: { type: 'string' },
  disabled: { type: 'boolean' },
  'portal-subdomain': { type: 'string' },
  'team-id': { type: 'string' },
  'dst-folder': { type: 'string' },
  'effective-time': { type: 'string' },
  'package-folder': { type: 'boolean' },
  'no-package-folder': { type: 'boolean' },
  'portal-subfolder': { type: 'boolean' },
  'no-portal-subfolder': { type: 'boolean' },
  'download-priority': { type: 'string' },
  path: { type: 'string' },
  timeout: { type: 'string' },
  recipients: { type: 'string', multiple: true },
  subdomain: { type: 'string' },
  'sender-email': { type: 'string' },
  'access-code': { type: 'string' },
  blacklist: { type: 'string', multiple: true },
  'upload-loose-files': { type: 'boolean' },
  'no-upload-loose-files': { type: 'boolean' },
  'growing-files': { type: 'boolean' },
  'no-growing-files': { type: 'boolean' },
  'delete-files-after-upload': { type: 'boolean' },
  'no-delete-files-after-upload': { type: 'boolean' },
  'package-name-suffix': { type: 'string' },
  message: { type: 'string' },
  priority: { type: 'string' },
  'delete-after': { type: 'string' },
  'download-limit': { type: 'string' },
  'download-password': { type: 'string' },
  'tag-id': { type: 'string' },
  'tag-name': { type: 'string' },
  'unlimited-storage': { type: 'boolean' },
  'no-unlimited-storage': { type: 'boolean' },
} as const satisfies OptionSpec;

/** The agent may run elsewhere in the file system tree: it gets absolute paths. */
const abs = (p: string | undefined) => (p === undefined ? undefined : path.resolve(p));

/** A switch and its opposite: true, false, or undefined when neither is given. */
function flag(v: Values, on: string, off: string): boolean | undefined {
  if (v[on] === true && v[off] === true) throw new UsageError(`--${on} and --${off} exclude each other`);
  return v[on] === true ? true : v[off] === true ? false : undefined;
}

function minutes(v: Values): number | undefined {
  const x = str(v, 'timeout');
  if (x === undefined) return undefined;
  const n = Number(x.trim());
  if (x.trim() === '' || !Number.isFinite(n) || n <= 0) throw new UsageError(`--timeout takes minutes above 0, got "${x}"`);
  return n;
}

/** The fields the flags give (only those), checked against what `type` takes. */
function fieldsOf(v: Values, type: AutomationType): AutomationFields {
  const team = str(v, 'team-id');
  const out: Record<string, unknown> = {
    name: str(v, 'name'),
    portal_subdomain: str(v, 'portal-subdomain'),
    team_id: team,
    dst_folder: abs(str(v, 'dst-folder')),
    effective_time: str(v, 'effective-time'),
    create_package_folder: flag(v, 'package-folder', 'no-package-folder'),
    create_portal_subfolder: flag(v, 'portal-subfolder', 'no-portal-subfolder'),
    download_priority: int(v, 'download-priority'),
    path: abs(str(v, 'path')),
    timeout: minutes(v),
    recipient_emails: list(v, 'recipients'),
    subdomain: str(v, 'subdomain'),
    sender_email: str(v, 'sender-email'),
    access_code: str(v, 'access-code'),
    // Globs may hold commas ({a,b}): repeat the flag, no splitting.
    blacklist: Array.isArray(v.blacklist) ? v.blacklist : undefined,
    upload_loose_files: flag(v, 'upload-loose-files', 'no-upload-loose-files'),
    growing_files: flag(v, 'growing-files', 'no-growing-files'),
    delete_files_after_upload: flag(v, 'delete-files-after-upload', 'no-delete-files-after-upload'),
    package_name_suffix: str(v, 'package-name-suffix'),
    message: str(v, 'message'),
    priority: int(v, 'priority'),
    delete_after: int(v, 'delete-after', 1),
    download_limit: int(v, 'download-limit', 0),
    download_password: str(v, 'download-password'),
    tag_id: str(v, 'tag-id'),
    tag_name: str(v, 'tag-name'),
    unlimited_storage: flag(v, 'unlimited-storage', 'no-unlimited-storage'),
  };
  const takes = Object.keys(UPDATE_BODIES[type].properties);
  for (const [k, x] of Object.entries(out)) {
    if (x === undefined) delete out[k];
    else if (!takes.includes(k)) throw new UsageError(`--${FLAG_OF[k] ?? k.replace(/_/g, '-')} does not apply to a ${type} automation`);
  }
  return out as AutomationFields;
}

/** The flag of a field, where it is not the field's name in kebab-case. */
const FLAG_OF: Record<string, string> = { recipient_emails: 'recipients', create_package_folder: 'package-folder', create_portal_subfolder: 'portal-subfolder' };

function typeOf(raw: string | undefined): AutomationType {
  const t = raw?.replace(/-/g, '_');
  if (!t || !(AUTOMATION_TYPES as readonly string[]).includes(t)) throw new UsageError(`name the type: ${AUTOMATION_TYPES.join(', ')}`);
  return t as AutomationType;
}

function oneId(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError('name one automation id');
  return positionals[0]!;
}

const SKIP = new Set(['automation_id', 'type', 'name', 'enabled', 'last_run_at', 'last_error', 'created_at', 'updated_at']);

function details(r: AutomationRecord): string {
  const lines = [`automation ${r.automation_id}: ${r.type}, ${r.enabled ? 'enabled' : 'disabled'}`, `name: ${r.name}`];
  for (const [k, x] of Object.entries(r)) if (!SKIP.has(k)) lines.push(`${k}: ${Array.isArray(x) ? x.join(', ') || '(none)' : String(x)}`);
  lines.push(`last run: ${r.last_run_at ?? 'never'}`);
  if (r.last_error) lines.push(`last error: ${r.last_error}`);
  lines.push(`created: ${r.created_at}, updated: ${r.updated_at}`);
  return lines.join('\n');
}

function packagesTable(list: AutomationPackage[]): string {
  if (list.length === 0) return 'no Packages yet';
  return table(
    ['STATE', 'DIRECTION', 'TRANSFER', 'PACKAGE', 'NAME'],
    list.map((p) => [p.state, p.direction, p.transfer_id, p.package_id ?? '-', `${p.name}${p.link_url ? `  ${p.link_url}` : ''}${p.error ? `  (${p.error})` : ''}`]),
  );
}

function listing(all: AutomationRecord[]): string {
  if (all.length === 0) return 'no automations';
  return table(
    ['AUTOMATION ID', 'TYPE', 'ENABLED', 'LAST RUN', 'NAME'],
    all.map((r) => [r.automation_id, r.type, r.enabled ? 'yes' : 'no', r.last_run_at ?? 'never', `${r.name}${r.last_error ? `  (error: ${r.last_error})` : ''}`]),
  );
}

const actions: Record<string, Command> = {
  ls: clientCommand('automations ls', 'usage: ferry automations ls', {}, async ({ client, print }) => {
    const all = await client.listAutomations();
    print(listing(all), all);
  }),
  get: clientCommand('automations get', 'usage: ferry automations get ID', {}, async ({ client, print, positionals }) => {
    const id = oneId(positionals);
    const r = await client.getAutomation(id);
    const packages = await client.automationPackages(id);
    print(`${details(r)}\n\n${packagesTable(packages)}`, r);
  }, true),
  packages: clientCommand('automations packages', 'usage: ferry automations packages ID', {}, async ({ client, print, positionals }) => {
    const list = await client.automationPackages(oneId(positionals));
    print(packagesTable(list), list);
  }, true),
  add: clientCommand('automations add', `usage: ferry automations add TYPE --name N [options]\n\n${HELP}`, OPTIONS, async ({ client, print, positionals, values: v }) => {
    if (positionals.length !== 1) throw new UsageError('name one type');
    const type = typeOf(positionals[0]);
    const body = fieldsOf(v, type);
    if (v.disabled === true) body.enabled = false;
    // Without --recipients a Team watch folder sends Links (the route wants the list, empty or not).
    if (type === 'team_upload') body.recipient_emails ??= [];
    const r = await client.createAutomation(type, body);
    print(`added ${r.type} automation ${r.automation_id} (${r.name})${r.enabled ? '' : ', disabled'}`, r);
  }, true),
  set: clientCommand('automations set', `usage: ferry automations set ID [options]\n\n${HELP}`, OPTIONS, async ({ client, print, positionals, values: v }) => {
    const id = oneId(positionals);
    if (v.disabled === true) throw new UsageError('use "ferry automations disable ID" to switch it off');
    const current = await client.getAutomation(id);
    const body = fieldsOf(v, current.type);
    if (Object.keys(body).length === 0) throw new UsageError('name at least one field to change');
    const r = await client.updateAutomation(current.type, id, body);
    print(`updated ${r.type} automation ${r.automation_id} (${r.name})`, r);
  }, true),
  rm: clientCommand('automations rm', 'usage: ferry automations rm ID', {}, async ({ client, print, positionals }) => {
    const r = await client.deleteAutomation(oneId(positionals));
    print(`removed ${r.type} automation ${r.automation_id} (${r.name})`, r);
  }, true),
  enable: clientCommand('automations enable', 'usage: ferry automations enable ID', {}, async ({ client, print, positionals }) => {
    const r = await client.enableAutomation(oneId(positionals), true);
    print(`enabled automation ${r.automation_id} (${r.name})`, r);
  }, true),
  disable: clientCommand('automations disable', 'usage: ferry automations disable ID', {}, async ({ client, print, positionals }) => {
    const r = await client.enableAutomation(oneId(positionals), false);
    print(`disabled automation ${r.automation_id} (${r.name})`, r);
  }, true),
};

export const automations: Command = commandGroup('automations', HELP, actions);
