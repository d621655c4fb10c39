// Where a download's URLs come from: the hosted service, with the read-only
// package token its Link handed out, many files' URLs in one request where the
// service has Ferry's `download_urls`. That token lives at most a day, so a 401
// resolves the Link again (once per expiry) and keeps the fresh token in SQLite.
import type { HostedHttp } from '../../client/http.js';
import { HostedApiError } from '../../client/http.js';
import { fileDownloadUrl, fileDownloadUrls, resolveLink } from '../../client/downloads.js';
import { MAX_FILES_PER_DOWNLOAD_URLS } from '../../api/hosted/files.js';
import { Gatherer, PACKAGE_CALL_GAP_MS } from './gather.js';

export interface LinkCredentials {
  linkId: string;
  secret: string;
  password: string | null;
  packageId: string;
  packageToken: string;
}

interface UrlCall {
  fileId: string;
  token: string;
}

export class DownloadSource {
  private refreshing: Promise<string> | undefined;
  /**
   * The files' URLs, gathered into `download_urls` requests while others are
   * under way (gather.ts): one request, and one count against the Package's
   * rate limit, for many small files instead of one each.
   */
  private readonly urls: Gatherer<UrlCall, string>;

  constructor(
    private readonly http: HostedHttp,
    private readonly link: LinkCredentials,
    /** Persists a fresh package token. */
    private readonly saveToken: (token: string) => void,
  ) {
    this.urls = new Gatherer<UrlCall, string>({
      together: async (calls) => {
        const outcomes = await fileDownloadUrls(this.http, this.link.packageId, calls.map((c) => c.fileId), calls[0]!.token);
        return calls.map((_, i) => {
          const o = outcomes[i];
          if (!o) return 'alone';
          return o.status === 200 && o.url ? { ok: o.url } : { error: HostedApiError.of(o.status, o) };
        });
      },
      alone: (c) => fileDownloadUrl(this.http, this.link.packageId, c.fileId, c.token),
    }, MAX_FILES_PER_DOWNLOAD_URLS, PACKAGE_CALL_GAP_MS);
  }

  /** A fresh pre-signed URL for one file. */
  async fileUrl(fileId: string, signal: AbortSignal): Promise<string> {
    const token = this.link.packageToken;
    try {
      return await this.urlOf(fileId, token, signal);
    } catch (err) {
      if (!(err instanceof HostedApiError) || err.status !== 401) throw err;
      return this.urlOf(fileId, await this.freshToken(token, signal), signal);
    }
  }

  /** The gathered call, given up when `signal` aborts (the request goes on for the others with it). */
  private urlOf(fileId: string, token: string, signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    return new Promise<string>((ok, fail) => {
      const stop = () => fail(signal.reason);
      signal.addEventListener('abort', stop, { once: true });
      this.urls.call({ fileId, token }).then(ok, fail).finally(() => signal.removeEventListener('abort', stop));
    });
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
