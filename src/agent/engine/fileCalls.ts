// The per-file calls of one upload run to the service, registrations and
// finalizes, gathered (gather.ts) into `register_files` and `finalize_files`
// requests when several come at once. Each file gets the outcome its own
// request would have had; a transient failure of one file sends that file
// again on its own.
import { HostedApiError, type HostedHttp } from '../../client/http.js';
import { finalizeFile, finalizeFiles, registerFile, registerFiles, type RegisterFileAnswer } from '../../client/uploads.js';
import { MAX_FILES_PER_FINALIZE, MAX_FILES_PER_REGISTER, type FinalizeFileBody, type RegisterFileBody, type RegisterFileQuery } from '../../api/hosted/files.js';
import { Gatherer, PACKAGE_CALL_GAP_MS, type Outcome } from './gather.js';
import { isTransientStatus, retrying, type RetryScope } from './retry.js';
import type { Target } from './outages.js';

/** A file's share of a batch answer, judged: 2xx is its result, a transient status goes again alone. */
function judged<O>(o: { status: number; code?: string; message?: string } | undefined, ok: () => O): Outcome<O> {
  if (!o || isTransientStatus(o.status)) return 'alone';
  if (o.status < 300) return { ok: ok() };
  return { error: HostedApiError.of(o.status, o) };
}

interface Register {
  body: RegisterFileBody;
  q?: RegisterFileQuery;
}

interface Finalize {
  fileId: string;
  body: FinalizeFileBody;
}

export class FileCalls {
  private readonly registrations: Gatherer<Register, RegisterFileAnswer>;
  private readonly finalizes: Gatherer<Finalize, void>;

  constructor(hosted: HostedHttp, packageId: string, packageToken: string, service: Target, scope: RetryScope & { signal: AbortSignal }) {
    const call = { auth: { packageToken }, signal: scope.signal };
    const retried = <T>(fn: () => Promise<T>) => retrying(fn, service, scope);
    this.registrations = new Gatherer<Register, RegisterFileAnswer>(
      {
        async together(items) {
          const files = items.map((r) => ({ ...r.body, ...r.q }));
          const { results } = await retried(() => registerFiles(hosted, packageId, { files }, call));
          return items.map((_, i) => {
            const o = results[i];
            // A success without its registration is a malformed answer: that entry goes again alone.
            return judged(o && (o.status >= 300 || o.registration) ? o : undefined, () => o!.registration!);
          });
        },
        alone: (r) => retried(() => registerFile(hosted, packageId, r.body, call, r.q)),
      },
      MAX_FILES_PER_REGISTER,
      PACKAGE_CALL_GAP_MS,
    );
    this.finalizes = new Gatherer<Finalize, void>(
      {
        async together(items) {
          const files = items.map((f) => ({ file_id: f.fileId, ...f.body }));
          const { results } = await retried(() => finalizeFiles(hosted, packageId, { files }, call));
          return items.map((f, i) => judged(results[i]?.file_id === f.fileId ? results[i] : undefined, () => undefined));
        },
        alone: (f) => retried(() => finalizeFile(hosted, packageId, f.fileId, f.body, call)),
      },
      MAX_FILES_PER_FINALIZE,
      PACKAGE_CALL_GAP_MS,
    );
  }

  /** Resolves what the entry's own registration would have answered (`q`: see registerFile). */
  register(body: RegisterFileBody, q?: RegisterFileQuery): Promise<RegisterFileAnswer> {
    return this.registrations.call({ body, q });
  }

  /** Resolves once the service has finalized the file; rejects with what its own finalize would have failed with. */
  finalize(fileId: string, body: FinalizeFileBody): Promise<void> {
    return this.finalizes.call({ fileId, body });
  }
}
