// Where a download's URLs come from: the hosted service, with the read-only
// package token its Link handed out. That token lives at most a day, so a 401
// resolves the Link again (once per expiry) and keeps the fresh token in SQLite.
import type { HostedHttp } from '../../client/http.js';
import { HostedApiError } from '../../client/http.js';
import { fileDownloadUrl, resolveLink } from '../../client/downloads.js';

export interface LinkCredentials {
  linkId: string;
  secret: string;
  password: string | null;
  packageId: string;
  packageToken: string;
}

export class DownloadSource {
  private refreshing: Promise<string> | undefined;

  constructor(
    private readonly http: HostedHttp,
    private readonly link: LinkCredentials,
    /** Persists a fresh package token. */
    private readonly saveToken: (token: string) => void,
  ) {}

  /** A fresh pre-signed URL for one file. */
  async fileUrl(fileId: string, signal: AbortSignal): Promise<string> {
    const token = this.link.packageToken;
    try {
      return await fileDownloadUrl(this.http, this.link.packageId, fileId, token, signal);
    } catch (err) {
      if (!(err instanceof HostedApiError) || err.status !== 401) throw err;
      return fileDownloadUrl(this.http, this.link.packageId, fileId, await this.freshToken(token, signal), signal);
    }
  }

  /** Resolves the Link again unless another caller already replaced the token that failed. */
  private freshToken(failed: string, signal: AbortSignal): Promise<string> {
    if (this.link.packageToken !== failed) return Promise.resolve(this.link.packageToken);
    this.refreshing ??= resolveLink(this.http, this.link.linkId, this.link.secret, this.link.password ?? undefined, signal)
      .then((info) => {
        if (info.package_id !== this.link.packageId) throw new HostedApiError(409, 'conflict', 'the Link now points at another Package');
        this.link.packageToken = info.package_token;
        this.saveToken(info.package_token);
        return info.package_token;
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }
}
