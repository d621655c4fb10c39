// The hosted API as its OpenAPI document describes it beyond the route schemas
// (src/http/openapi/document.ts): its credentials, Ferry's additions to the
// contract (docs/hosted-api.md marks the same with `+`), and the routes whose
// answer is no JSON.
import { ErrorBody } from '../errors.js';
import { HOSTED_SUMMARIES } from './hostedSummaries.js';
import type { Answer, ApiDescription, Requirement } from './types.js';

const member: Requirement[] = [{ apiKey: [] }, { userToken: [] }];
const PUBLIC = /^(POST \/v1\/auth|GET \/v1\/system\/packages\/spec|GET \/healthz|GET \/readyz|GET \/updates\/\{file\}|GET \/p\/\{subdomain\}|GET \/assets\/portal-upload\.js|(GET|POST) \/l\/\{link_id\})$/;

/** The credential each route takes (docs/hosted-api.md, "Authentication"); a member's by default. */
function security(method: string, path: string): Requirement[] {
  const key = `${method} ${path}`;
  if (PUBLIC.test(key)) return [];
  if (/^POST \/v1\/(auth\/refresh|auth\/sign_out_everywhere|me\/password)$/.test(key)) return [{ userToken: [] }];
  if (key === 'GET /v1/links/{link_id}') return [{ linkSecret: [] }, { linkSecret: [], linkPassword: [] }];
  if (key === 'GET /v1/packages/{package_id}/zip/{variant}') return [{ zipToken: [] }];
  if (key === 'GET /v1/storage_gateway/connect') return [{ gatewayId: [], gatewaySecret: [] }];
  // Anyone may send to a Portal (with its access code if it has one); a private Portal's members sign in.
  if (key === 'POST /v1/portals/{portal_id}/packages' || key === 'GET /v1/subdomains/portals/{subdomain}') return [{}, { accessCode: [] }, ...member];
  if (path.startsWith('/v1/packages/{package_id}') || key === 'DELETE /v1/links/{link_id}') return [{ packageToken: [] }, ...member];
  return member;
}

const NO_CONTENT: Answer = { status: 204, why: 'Done; no content.' };
const noContent = (...keys: string[]) => Object.fromEntries(keys.map((k) => [k, NO_CONTENT]));
const SSE = 'Server-Sent Events: one `event:` and JSON `data:` per change (docs/hosted-api-notes/events.md).';
const PAGE = 'An HTML page for people (docs/hosted-api-notes/portal-page.md).';

export const HOSTED_API: ApiDescription = {
  title: 'Ferry hosted API',
  description: "The hosted service's API (docs/hosted-api.md): JSON over HTTP under /v1 (paged lists under /v1.1), the web pages, health and updates.",
  prefix: '',
  securitySchemes: {
    apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY', description: "A member's API key; acts as the member with their role." },
    userToken: { type: 'apiKey', in: 'header', name: 'X-User-Token', description: 'A user token from POST /v1/auth.' },
    packageToken: { type: 'apiKey', in: 'header', name: 'X-Package-Token', description: "One Package's access_token: full access for its creator, read-only from a Link, upload-only for a Portal sender." },
    accessCode: { type: 'apiKey', in: 'header', name: 'X-Access-Code', description: "A Portal's access code, when it has one." },
    linkSecret: { type: 'apiKey', in: 'query', name: 'secret', description: "A Link's secret." },
    linkPassword: { type: 'apiKey', in: 'header', name: 'X-Link-Password', description: "A Link's password, when it has one." },
    zipToken: { type: 'apiKey', in: 'query', name: 'token', description: 'The grant of one ZIP URL, from the file list or the Link page.' },
    gatewayId: { type: 'apiKey', in: 'header', name: 'X-Gateway-Id', description: "A storage gateway's cloud connection id." },
    gatewaySecret: { type: 'apiKey', in: 'header', name: 'X-Gateway-Secret', description: "A storage gateway's cloud connection secret." },
  },
  security,
  error: ErrorBody,
  additions: {
    'POST /v1/auth/refresh': true,
    'POST /v1/auth/sign_out_everywhere': true,
    'POST /v1/me/password': true,
    'POST /v1/packages/{package_id}/files': { query: ['count', 'single'] },
    'POST /v1/packages/{package_id}/register_files': true,
    'POST /v1/packages/{package_id}/finalize_files': true,
    'GET /v1/packages/{package_id}/files': { query: ['after', 'limit'] },
    'GET /v1/links/{link_id}': { fields: ['total_files'] },
    'GET /v1/packages/{package_id}': { fields: ['terms_accepted_at'] },
    'POST /v1/packages/{package_id}/download_urls': true,
    'GET /v1/packages/{package_id}/zip/{variant}': true,
    'GET /v1/portals/{portal_id}/form': true,
    'GET /v1/metadata/forms/{form_id}': true,
    'GET /v1/teams/{team_id}/forms/templates': true,
    'GET /v1/metadata/forms/templates/{form_template_id}': true,
    'GET /v1/cloud_connections/{connection_id}': true,
    'GET /v1/cloud_connections/{connection_id}/transfers': true,
    'POST /v1/cloud_connections/{connection_id}/secret': true,
    'GET /v1/packages/{package_id}/transfers': true,
    'GET /v1/packages/{package_id}/transfers/{transfer_id}': true,
    'GET /v1/storage_gateway/connect': true,
    'GET /v1/teams/{team_id}/filters': true,
    'GET /v1/custom_webhooks/{custom_webhook_id}': true,
    'GET /v1/custom_webhooks/{custom_webhook_id}/events': true,
    'GET /healthz': true,
    'GET /readyz': true,
    'GET /updates/{file}': true,
  },
  answers: {
    ...noContent(
      'POST /v1/auth/sign_out_everywhere',
      'DELETE /v1/api_keys/{api_key_id}',
      'DELETE /v1/packages/{package_id}',
      'PUT /v1/packages/{package_id}/archive',
      'PUT /v1/packages/{package_id}/unarchive',
      'DELETE /v1/tags/{tag_id}',
      'POST /v1/packages/{package_id}/files/{file_id}/finalize',
      'POST /v1/packages/{package_id}/finalize',
      'DELETE /v1/links/{link_id}',
      'DELETE /v1/portals/{portal_id}',
      'DELETE /v1/custom_webhooks/{custom_webhook_id}',
      'DELETE /v1/filters/{filter_id}',
      'DELETE /v1/cloud_connections/{connection_id}',
      'DELETE /v1/spaces/{space_id}',
      'DELETE /v1/spaces/{space_id}/members/{teamspace_membership_id}',
      'DELETE /v1/metadata/forms/{form_id}',
      'DELETE /v1/metadata/forms/templates/{form_template_id}',
    ),
    'GET /v1/packages/{package_id}/zip/{variant}': { status: 200, type: 'application/zip', why: 'The ZIP, streamed as it is made (docs/hosted-api-notes/uploads-downloads.md).' },
    'GET /p/{subdomain}': { status: 200, type: 'text/html', why: PAGE },
    'GET /assets/portal-upload.js': { status: 200, type: 'text/javascript', why: "The Portal page's script." },
    'GET /v1/storage_gateway/connect': { status: 101, why: 'Switches to a WebSocket; a plain GET with good credentials answers 426 (docs/hosted-api-notes/cloud-connections.md).' },
    'GET /updates/{file}': { status: 200, type: 'application/octet-stream', why: 'The file as it is in the updates folder.' },
    'GET /v1/packages/{package_id}/events': { status: 200, type: 'text/event-stream', why: SSE },
    'GET /v1/teams/{team_id}/events': { status: 200, type: 'text/event-stream', why: SSE },
    'GET /l/{link_id}': { status: 200, type: 'text/html', why: PAGE },
    'POST /l/{link_id}': { status: 200, type: 'text/html', why: PAGE },
  },
  noBody: {
    'POST /v1/auth/refresh': 'the token is the credential',
    'POST /v1/auth/sign_out_everywhere': 'an action on the session',
    'PUT /v1/api_keys/{api_key_id}/activate': 'an action on the key',
    'PUT /v1/api_keys/{api_key_id}/deactivate': 'an action on the key',
    'PUT /v1/packages/{package_id}/archive': 'an action on the Package',
    'PUT /v1/packages/{package_id}/unarchive': 'an action on the Package',
    'POST /v1/packages/{package_id}/finalize': 'an action on the Package',
    'POST /v1/cloud_connections/{connection_id}/secret': 'the service makes the secret',
  },
  bodyTypes: { 'POST /l/{link_id}': 'application/x-www-form-urlencoded' },
  summaries: HOSTED_SUMMARIES,
};
