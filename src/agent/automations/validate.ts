// Checks of an automation's fields beyond their schema, made when it is created
// and for the fields an update changes: folders are absolute (a watched one
// exists; a destination is created), Teams and Portals are the signed-in user's,
// globs compile, watched folders and destinations do not overlap (a Portal
// download into a watched folder would send every Package back). Defaults are
// filled in, so that a record shows every field.
import type { AutomationFields, AutomationType } from '../../api/agent/automations.js';
import type { SessionService } from '../services/session.js';
import { fromHosted } from '../services/session.js';
import { getPortalBySubdomain, listTeamPortals } from '../../client/portals.js';
import { AgentError, conflict, invalid } from '../errors.js';
import { isInside } from '../engine/safePath.js';
import { checkRequestPath, makeFolder } from '../engine/requestPath.js';
import { globProblem } from './glob.js';

export const WATCH_TYPES: readonly AutomationType[] = ['team_upload', 'portal_upload'];
export const isWatch = (t: AutomationType) => WATCH_TYPES.includes(t);

/** Fields each kind fills in when a body leaves them out. */
export function withDefaults(type: AutomationType, f: AutomationFields, now = new Date()): AutomationFields {
  const out: AutomationFields = { enabled: true, ...f };
  if (type === 'portal_download' || type === 'all_portals_download') {
    out.create_package_folder ??= true;
    out.effective_time ??= now.toISOString();
    if (type === 'all_portals_download') out.create_portal_subfolder ??= false;
  } else {
    out.blacklist ??= [];
    out.delete_files_after_upload ??= false;
    out.package_name_suffix ??= '';
    out.message ??= '';
    out.priority ??= 0;
    out.upload_loose_files ??= false;
    out.growing_files ??= false;
    if (type === 'team_upload') out.unlimited_storage ??= false;
  }
  return out;
}

/** A watched folder exists; the agent reads it and may delete what it sent from it. */
const watchedFolder = async (p: string) => (await checkRequestPath(p, { field: 'path', kind: 'folder' })).abs;

/** A destination the agent writes to; made (at the end of the checks) when missing. */
const destination = (p: string) => checkRequestPath(p, { field: 'dst_folder', kind: 'folder', write: true, create: true });

export interface Others {
  /** The other automations: their id, type and fields. */
  list: { id: string; name: string; type: AutomationType; fields: AutomationFields }[];
}

const folderOf = (type: AutomationType, f: AutomationFields) => (isWatch(type) ? f.path : f.dst_folder);

/** Watched folders never overlap one another, nor a download's destination. */
function checkOverlap(type: AutomationType, f: AutomationFields, others: Others): void {
  const mine = folderOf(type, f);
  if (!mine) return;
  for (const o of others.list) {
    const theirs = folderOf(o.type, o.fields);
    if (!theirs || (!isWatch(type) && !isWatch(o.type))) continue;
    if (isInside(mine, theirs) || isInside(theirs, mine)) {
      const field = isWatch(type) ? 'path' : 'dst_folder';
      const whose = isWatch(o.type) ? 'watched folder' : 'download folder';
      throw conflict(`${field} overlaps the ${whose} of automation "${o.name}" (${o.id}): files would be sent or fetched twice`);
    }
  }
}

export interface CheckDeps {
  session: SessionService;
}

/**
 * Checks the fields named in `changed` (all of them on create) and the rules that
 * tie fields together; answers the fields to store (paths resolved, times in UTC).
 */
export async function checkFields(type: AutomationType, f: AutomationFields, changed: Set<string>, deps: CheckDeps, others: Others): Promise<AutomationFields> {
  const out: AutomationFields = { ...f };
  if (out.name !== undefined) {
    out.name = out.name.trim();
    if (out.name === '') throw invalid('name must not be blank');
  }
  if (changed.has('path') && out.path !== undefined) out.path = await watchedFolder(out.path);
  let makeDst: string | undefined;
  if (changed.has('dst_folder') && out.dst_folder !== undefined) {
    const d = await destination(out.dst_folder);
    out.dst_folder = d.abs;
    if (!d.exists) makeDst = d.abs;
  }
  if (out.effective_time !== undefined) out.effective_time = new Date(out.effective_time).toISOString();
  if (changed.has('blacklist')) {
    for (const g of out.blacklist ?? []) {
      const problem = globProblem(g);
      if (problem) throw invalid(`blacklist: "${g}" is not a usable pattern (${problem})`);
    }
  }
  if (changed.has('path') || changed.has('dst_folder')) checkOverlap(type, out, others);

  const teamFields = ['team_id', 'recipient_emails', 'delete_after', 'unlimited_storage'];
  if ((type === 'team_upload' || type === 'all_portals_download') && teamFields.some((k) => changed.has(k))) {
    const team = (await deps.session.teams()).find((t) => t.id === out.team_id);
    if (!team) throw invalid(`team_id: ${out.team_id} is not a Team of the signed-in user`);
    if (type === 'team_upload') {
      if ((out.recipient_emails ?? []).length > team.max_email_recipients) {
        throw invalid(`recipient_emails: this Team allows at most ${team.max_email_recipients} recipients`);
      }
      if (out.delete_after !== undefined && out.unlimited_storage) throw invalid('delete_after and unlimited_storage exclude each other');
      if (out.delete_after !== undefined && !team.custom_expiry_enabled) throw invalid('this Team does not allow a custom expiry, so delete_after cannot be used');
    }
  }
  if (type === 'portal_download' && changed.has('portal_subdomain')) {
    const want = out.portal_subdomain!.trim().toLowerCase();
    const auth = deps.session.credentials();
    let found = false;
    for (const team of await deps.session.teams()) {
      for (let page = 1; page <= 100 && !found; page++) {
        const r = await listTeamPortals(deps.session.hosted, team.id, { page, subdomain: want }, { auth }).catch(fromHosted);
        found = r.records.some((p) => p.subdomain.toLowerCase() === want);
        if (page * r.metadata.limit >= r.metadata.total) break;
      }
      if (found) break;
    }
    if (!found) throw invalid(`portal_subdomain: no Portal "${want}" belongs to a Team of the signed-in user`);
    out.portal_subdomain = want;
  }
  if (type === 'portal_upload' && changed.has('subdomain')) {
    const want = out.subdomain!.trim().toLowerCase();
    const portal = await getPortalBySubdomain(deps.session.hosted, want).catch((err) => {
      try {
        return fromHosted(err);
      } catch (mapped) {
        if (mapped instanceof AgentError && mapped.status === 404) throw invalid(`subdomain: no active Portal "${want}"`);
        throw mapped;
      }
    });
    if (portal.custom_metadata_required) throw invalid('subdomain: this Portal asks for a metadata form, which the agent cannot fill in');
    out.subdomain = want;
  }
  // Last, so that a refused body leaves nothing behind.
  if (makeDst) await makeFolder(makeDst, 'dst_folder');
  return out;
}
