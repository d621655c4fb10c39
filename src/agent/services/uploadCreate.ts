// The creation of an upload from its plan: a Team upload (the session's) or a
// Portal upload (no session), its Package created on the service before the
// answer, then the upload and its entries recorded in SQLite. Apart from
// uploads.ts, which runs, pauses and finishes uploads once they exist.
import { randomBytes } from 'node:crypto';
import type { AgentContext } from '../context.js';
import type { SessionService } from './session.js';
import { fromHosted } from './session.js';
import { AgentError, invalid } from '../errors.js';
import type { CreateUploadBody, PortalUploadBody, UploadSummary } from '../../api/agent/uploads.js';
import { HostedApiError, type Credentials } from '../../client/http.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { createTeamPackage, type Package } from '../../client/uploads.js';
import { createPortalPackage, getPortalBySubdomain } from '../../client/portals.js';
import { checkPortalRestrictions, planUpload, type UploadPlan } from '../engine/uploadPlan.js';
import { insertStagedUpload, type UploadRow } from '../store/uploadStore.js';
import { dropStage } from '../store/walkStage.js';
import { markGrowing } from '../store/growingFiles.js';

/** An upload's id, as the service makes them (and an automation chooses them before it asks for one). */
export const newUploadId = () => `upl_${randomBytes(12).toString('hex')}`;

/**
 * What the agent's automations pass beside a body: the upload's id, chosen and
 * recorded before the upload is made, and the entries to send (a watch folder's
 * scan, its blacklist applied: uploadPlan.planOf) instead of a walk of the body's
 * paths. The plan's stage is dropped once the upload took it or failed.
 */
export interface MadeBy { id?: string; plan?: UploadPlan }

/** `started`: the upload is recorded; it starts, and its summary is the answer. */
export function createUploadCreation(ctx: AgentContext, session: SessionService, started: (id: string) => UploadSummary) {
  const { db } = ctx;

  /** Records a new upload (its Package exists) and starts it. */
  function begin(
    type: UploadRow['type'],
    pkg: Package,
    plan: UploadPlan,
    o: { chunk_size?: number; priority?: number; delete_after?: number; id?: string; recipients?: string[] },
  ): UploadSummary {
    const id = o.id ?? newUploadId();
    insertStagedUpload(
      db,
      {
        id,
        type,
        state: 'transferring',
        package_id: pkg.id,
        package_token: pkg.access_token,
        name: plan.name,
        package_name: pkg.name,
        priority: o.priority ?? 0,
        chunk_size: o.chunk_size ?? ctx.config.chunkSize,
        auto_finalize: ctx.config.autoFinalize ? 1 : 0,
        delete_after: o.delete_after ?? null,
        size: plan.size,
        recipients: o.recipients?.length ? JSON.stringify(o.recipients) : null,
      },
      plan.stage,
    );
    if (plan.growing) markGrowing(db, id, plan.growing.paths, plan.growing.quietMs);
    return started(id);
  }

  async function createTeam(body: CreateUploadBody, auth: Credentials, plan: UploadPlan, made: MadeBy): Promise<UploadSummary> {
    if (body.delete_after !== undefined && body.unlimited_storage) throw invalid('delete_after and unlimited_storage exclude each other');
    if (body.delete_after !== undefined) {
      const team = (await session.teams()).find((t) => t.id === body.team_id);
      if (team && !team.custom_expiry_enabled) throw invalid('this Team does not allow a custom expiry, so delete_after cannot be used');
    }
    const pkg = await createTeamPackage(
      session.hosted,
      body.team_id,
      {
        name: body.package_name ?? plan.name,
        description: body.package_description ?? '',
        recipients: body.recipients ?? [],
        access_limit: body.download_limit,
        password: body.password,
        tag: body.tag,
        unlimited_storage: body.unlimited_storage,
        teamspace_id: body.teamspace_id,
      },
      { auth },
    ).catch(fromHosted);
    return begin('team', pkg, plan, { chunk_size: body.chunk_size, priority: body.priority, delete_after: body.delete_after, id: made.id, recipients: body.recipients });
  }

  async function createForPortal(body: PortalUploadBody, plan: UploadPlan, made: MadeBy): Promise<UploadSummary> {
    const portal = await getPortalBySubdomain(session.hosted, body.subdomain).catch(fromHosted);
    if (portal.custom_metadata_required) throw invalid('this Portal asks for a metadata form, which the agent cannot fill in');
    if (portal.terms_of_service_enabled && body.accept_terms !== true) {
      throw invalid(`this Portal asks the sender to accept its terms of service ("${portal.terms_of_service?.title ?? 'terms'}", shown on its page): send accept_terms: true`);
    }
    const name = body.package_name ?? plan.name;
    checkPortalRestrictions(db, plan, portal.restrictions, name);
    // A Portal for signed-in members takes the session; otherwise the access code is the credential.
    const auth: Credentials = portal.user_authentication_required ? session.credentials() : {};
    if (body.access_code !== undefined) auth.accessCode = body.access_code;
    const pkg = await createPortalPackage(
      session.hosted,
      portal.id,
      { name, description: body.package_description ?? '', sender: body.sender_email, ...(portal.terms_of_service_enabled ? { terms_accepted: true } : {}) },
      { auth },
    ).catch((err) => {
      // A wrong or missing access code is not the session's fault: it must not read as "session is nil".
      if (err instanceof HostedApiError && err.status === 401 && !portal.user_authentication_required) {
        throw new AgentError(403, AgentErrorCode.forbidden, `the Portal refused the access code: ${err.message}`);
      }
      return fromHosted(err);
    });
    return begin('portal', pkg, plan, { chunk_size: body.chunk_size, priority: body.priority, id: made.id });
  }

  return {
    /** POST /uploads: a Team upload (needs the session). The Package is created before the answer. */
    async create(body: CreateUploadBody, made: MadeBy = {}): Promise<UploadSummary> {
      const auth = session.credentials();
      const plan = made.plan ?? (await planUpload(db, body.paths));
      try {
        return await createTeam(body, auth, plan, made);
      } finally {
        dropStage(db, plan.stage);
      }
    },

    /**
     * POST /portals/uploads: no session needed. The Portal is looked up by subdomain and
     * the paths checked against its restrictions before its Package is created.
     */
    async createPortal(body: PortalUploadBody, made: MadeBy = {}): Promise<UploadSummary> {
      const plan = made.plan ?? (await planUpload(db, body.paths));
      try {
        return await createForPortal(body, plan, made);
      } finally {
        dropStage(db, plan.stage);
      }
    },
  };
}
