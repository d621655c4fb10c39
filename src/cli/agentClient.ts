// A typed client of the local agent's REST API, for the `ferry` transfer commands.
// Types come from the agent's wire schemas (src/api/agent), so the two cannot drift.
import type { About, CodeAnswer, Health, Validation, VersionCheck } from '../api/agent/system.js';
import type { LoginBody, SessionAnswer, SessionTeam } from '../api/agent/session.js';
import type {
  CreateUploadBody, FinalizeAnswer, PortalUploadBody, UploadLinkAnswer, UploadLinkBody, UploadRecord, UploadSummary,
} from '../api/agent/uploads.js';
import type { CreateDownloadBody, CreatedDownload, DownloadRecord, DownloadSummary } from '../api/agent/downloads.js';
import type { DownloadFilesPage, UploadFilesPage } from '../api/agent/transfers.js';
import type { EventType, StreamEvent } from '../api/agent/events.js';
import type { AutomationFields, AutomationPackage, AutomationRecord, AutomationType } from '../api/agent/automations.js';
import type { GatewayRecord, NewConnectionAnswer, NewConnectionBody, RegisterGatewayBody, UpdateGatewayBody } from '../api/agent/storageGateway.js';

export const DEFAULT_AGENT_URL = 'http://127.0.0.1:8080/api/v1';

/** The agent answered with an error: its status and `{code, message}`. */
export class AgentRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** Nothing answered at the agent's address. */
export class AgentUnreachableError extends Error {}

export interface CreatedUpload { upload_id: string; package_id: string }

/** A page of a transfer's files: `limit` after the index `after`. */
export interface Page { after?: number; limit?: number }

/** pause, resume and delete answer the affected record, or every affected record. */
export type Affected<R> = R | R[];

/** `--agent URL` or FERRY_AGENT_URL; a bare `http://host:port` gets /api/v1 appended. */
export function agentBaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const text = flag || env.FERRY_AGENT_URL || DEFAULT_AGENT_URL;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new Error(`the agent URL "${text}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`the agent URL "${text}" must start with http:// or https://`);
  const base = `${u.origin}${u.pathname}`.replace(/\/+$/, '');
  return u.pathname === '/' || u.pathname === '' ? `${base}/api/v1` : base;
}

type Query = Record<string, string | number | boolean | undefined>;

export class AgentClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey?: string,
    private readonly timeoutMs = 60_000,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { accept: 'application/json', ...(this.apiKey ? { 'x-api-key': this.apiKey } : {}), ...extra };
  }

  private url(path: string, query?: Query): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) qs.set(k, String(v));
    return `${this.baseUrl}${path}${qs.size ? `?${qs}` : ''}`;
  }

  private async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (err) {
      if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError') throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new AgentUnreachableError(
        `cannot reach the agent at ${this.baseUrl} (${cause?.code ?? cause?.message ?? (err as Error).message}); is "ferry agent" running? (--agent URL or FERRY_AGENT_URL)`,
      );
    }
  }

  async request<T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
    const hasBody = opts.body !== undefined;
    const res = await this.send(this.url(path, opts.query), {
      method,
      headers: this.headers(hasBody ? { 'content-type': 'application/json' } : {}),
      body: hasBody ? JSON.stringify(opts.body) : undefined,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const e = (parsed ?? {}) as { code?: unknown; message?: unknown };
      throw new AgentRequestError(res.status, typeof e.code === 'number' ? e.code : undefined, typeof e.message === 'string' ? e.message : `HTTP ${res.status}`);
    }
    return parsed as T;
  }

  // System
  about = () => this.request<About>('GET', '/about');
  versionCheck = () => this.request<VersionCheck>('GET', '/version_check');
  health = () => this.request<Health>('GET', '/health');
  validation = () => this.request<Validation>('GET', '/validation');
  shutdown = () => this.request<CodeAnswer>('POST', '/shutdown');

  // Session
  login = (body: LoginBody) => this.request<SessionAnswer>('POST', '/login', { body });
  session = () => this.request<SessionAnswer>('GET', '/login');
  logout = () => this.request<CodeAnswer>('DELETE', '/login');
  teams = () => this.request<SessionTeam[]>('GET', '/teams');

  // Uploads
  createUpload = (body: CreateUploadBody) => this.request<CreatedUpload>('POST', '/uploads', { body, query: { files: false } });
  createPortalUpload = (body: PortalUploadBody) => this.request<CreatedUpload>('POST', '/portals/uploads', { body, query: { files: false } });
  listUploads = () => this.request<UploadSummary[]>('GET', '/uploads', { query: { files: false } });
  getUpload = (id: string) => this.request<UploadRecord>('GET', `/uploads/${encodeURIComponent(id)}`);
  uploadSummary = (id: string) => this.request<UploadSummary>('GET', `/uploads/${encodeURIComponent(id)}`, { query: { files: false } });
  uploadFiles = (id: string, page: Page = {}) => this.request<UploadFilesPage>('GET', `/uploads/${encodeURIComponent(id)}/files`, { query: { ...page } });
  pauseUploads = (id?: string) => this.request<Affected<UploadSummary>>('POST', id ? `/uploads/${encodeURIComponent(id)}/pause` : '/uploads/pause', { query: { files: false } });
  resumeUploads = (id?: string) => this.request<Affected<UploadSummary>>('POST', id ? `/uploads/${encodeURIComponent(id)}/resume` : '/uploads/resume', { query: { files: false } });
  cancelUpload = (id: string) => this.request<UploadSummary>('POST', `/uploads/${encodeURIComponent(id)}/cancel`, { query: { files: false } });
  deleteUploads = (opts: { id?: string; states?: string }) =>
    this.request<Affected<UploadSummary>>('DELETE', opts.id ? `/uploads/${encodeURIComponent(opts.id)}` : '/uploads', { query: { states: opts.states, files: false } });
  finalizeUpload = (id: string) => this.request<FinalizeAnswer>('POST', `/uploads/${encodeURIComponent(id)}/finalize`);
  createLink = (id: string, body: UploadLinkBody) => this.request<UploadLinkAnswer>('POST', `/uploads/${encodeURIComponent(id)}/link`, { body });

  // Downloads
  createDownload = (body: CreateDownloadBody) => this.request<CreatedDownload>('POST', '/downloads', { body });
  listDownloads = () => this.request<DownloadSummary[]>('GET', '/downloads', { query: { files: false } });
  getDownload = (id: string) => this.request<DownloadRecord>('GET', `/downloads/${encodeURIComponent(id)}`);
  downloadSummary = (id: string) => this.request<DownloadSummary>('GET', `/downloads/${encodeURIComponent(id)}`, { query: { files: false } });
  downloadFiles = (id: string, page: Page = {}) => this.request<DownloadFilesPage>('GET', `/downloads/${encodeURIComponent(id)}/files`, { query: { ...page } });
  pauseDownloads = (id?: string) =>
    this.request<Affected<DownloadSummary>>('POST', id ? `/downloads/${encodeURIComponent(id)}/pause` : '/downloads/pause', { query: { files: false } });
  resumeDownloads = (id?: string) =>
    this.request<Affected<DownloadSummary>>('POST', id ? `/downloads/${encodeURIComponent(id)}/resume` : '/downloads/resume', { query: { files: false } });
  cancelDownload = (id: string) => this.request<DownloadSummary>('POST', `/downloads/${encodeURIComponent(id)}/cancel`, { query: { files: false } });
  deleteDownloads = (opts: { id?: string; states?: string; removeFiles?: boolean }) =>
    this.request<Affected<DownloadSummary>>('DELETE', opts.id ? `/downloads/${encodeURIComponent(opts.id)}` : '/downloads', {
      query: { states: opts.states, remove_files: opts.removeFiles || undefined, files: false },
    });

  // Automations
  listAutomations = () => this.request<AutomationRecord[]>('GET', '/automations');
  getAutomation = (id: string) => this.request<AutomationRecord>('GET', `/automations/${encodeURIComponent(id)}`);
  automationPackages = (id: string) => this.request<AutomationPackage[]>('GET', `/automations/${encodeURIComponent(id)}/packages`);
  createAutomation = (type: AutomationType, body: AutomationFields) => this.request<AutomationRecord>('POST', `/automations/${type}`, { body });
  updateAutomation = (type: AutomationType, id: string, body: AutomationFields) =>
    this.request<AutomationRecord>('PUT', `/automations/${type}/${encodeURIComponent(id)}`, { body });
  deleteAutomation = (id: string) => this.request<AutomationRecord>('DELETE', `/automations/${encodeURIComponent(id)}`);
  enableAutomation = (id: string, enabled: boolean) => this.request<AutomationRecord>('POST', `/automations/${encodeURIComponent(id)}/${enabled ? 'enable' : 'disable'}`);
  // Storage gateway
  registerGateway = (body: RegisterGatewayBody) => this.request<GatewayRecord>('POST', '/storage_gateway/register', { body });
  listGateways = () => this.request<GatewayRecord[]>('GET', '/storage_gateway/list');
  updateGateway = (body: UpdateGatewayBody) => this.request<GatewayRecord>('POST', '/storage_gateway/update', { body });
  unregisterGateway = (id: string) => this.request<GatewayRecord>('POST', '/storage_gateway/unregister', { body: { id } });
  newGatewayConnection = (body: NewConnectionBody) => this.request<NewConnectionAnswer>('POST', '/storage_gateway/connections', { body });

  /**
   * Opens GET /events. Resolves once the agent has subscribed the stream (its
   * headers arrived), with the events as they come; ends when the agent ends the
   * stream or `signal` aborts.
   */
  async events(opts: { types?: EventType[]; since?: number; signal: AbortSignal }): Promise<AsyncIterable<StreamEvent>> {
    const res = await this.send(this.url('/events', { types: opts.types?.join(','), since: opts.since }), {
      headers: this.headers({ accept: 'text/event-stream' }),
      signal: opts.signal,
    });
    if (!res.ok || !res.body) throw new AgentRequestError(res.status, undefined, `GET /events answered ${res.status}`);
    return parseEventStream(res.body as unknown as AsyncIterable<Uint8Array>);
  }
}

/** The `id`/`event`/`data` frames of an SSE body; comments (pings) and frames without data are skipped. */
export async function* parseEventStream(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of body) {
      buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let id = 0, type = 'message', data: string | undefined;
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':');
          if (colon === 0) continue;
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') id = Number(value);
          else if (field === 'event') type = value;
          else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
        }
        if (data === undefined) continue;
        let parsed: unknown = data;
        try {
          parsed = JSON.parse(data);
        } catch {
          // not JSON: passed on as text
        }
        yield { id, type, data: parsed } as StreamEvent;
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  }
}
