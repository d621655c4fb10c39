// The last steps of an upload on the service: the Package finalize (which sends
// it to its recipients) and, when asked for, its expiry. Safe to run again after
// a crash or a lost answer: a Package that is already finalized counts as done.
import { HostedApiError, type HostedHttp } from '../../client/http.js';
import { finalizePackage, getPackage, setPackageExpiry } from '../../client/uploads.js';
import type { UploadRow } from '../store/uploadStore.js';
import { retrying, type RetryScope } from './retry.js';
import type { Target } from './outages.js';

const DAY_MS = 24 * 3600 * 1000;

export async function finalizeOnService(hosted: HostedHttp, u: UploadRow, service: Target, scope: RetryScope): Promise<void> {
  const call = { auth: { packageToken: u.package_token }, signal: scope.signal };
  try {
    await retrying(() => finalizePackage(hosted, u.package_id, call), service, scope);
  } catch (err) {
    if (!(err instanceof HostedApiError && err.status === 409)) throw err;
    const pkg = await retrying(() => getPackage(hosted, u.package_id, call), service, scope);
    if (pkg.state !== 'finalized') throw err;
  }
  if (u.delete_after) {
    // Counted from the Package's delivery, as the Team's default expiry is.
    const expiry = new Date(Date.now() + u.delete_after * DAY_MS).toISOString();
    await retrying(() => setPackageExpiry(hosted, u.package_id, { expiry, unlimited_storage: false }, call), service, scope);
  }
}
