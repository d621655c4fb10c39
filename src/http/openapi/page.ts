// The readable page of an OpenAPI document (GET /docs/api): plain HTML made on
// the server, no script and no request of its own, on the app's tokens
// (src/format/tokens.ts) as the service's pages are. Operations are grouped by
// tag, each under its own heading and anchor; schemas open in <details>.
import { createHash } from 'node:crypto';
import { TOKENS_CSS } from '../../format/tokens.js';
import { OPENAPI_PATH, type Json, type OpenApiDocument, type Operation } from './document.js';

const e = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const CSS = `
*{box-sizing:border-box}
body{font:var(--size-title-2)/1.5 var(--font);margin:0;background:var(--bg);color:var(--text)}
.wrap{display:grid;grid-template-columns:260px minmax(0,1fr);gap:var(--space-3);max-width:1200px;margin:0 auto;padding:var(--space-3)}
@media (max-width:800px){.wrap{grid-template-columns:1fr;padding:var(--space-2)}}
nav{position:sticky;top:var(--space-2);align-self:start;max-height:calc(100vh - 32px);overflow:auto;font-size:var(--size-body)}
nav ul{list-style:none;margin:0 0 var(--space-2);padding:0}nav li{margin:2px 0;overflow-wrap:anywhere}
nav h2{font-size:var(--size-body);color:var(--muted);margin:var(--space-2) 0 var(--space-half)}
h1{font-size:var(--size-title);font-weight:600;margin:0 0 var(--space-1)}
h2{font-size:var(--size-title);font-weight:600;margin:var(--space-4) 0 var(--space-1)}
h3{font-size:var(--size-title-2);font-weight:600;margin:0 0 var(--space-1);word-break:break-all;scroll-margin-top:var(--space-4)}
p{margin:var(--space-1) 0}.muted{color:var(--muted)}a{color:var(--accent)}
article{background:var(--panel);border:1px solid var(--line);border-radius:var(--radius-card);padding:var(--space-2);margin:var(--space-2) 0}
.method{display:inline-block;min-width:64px;font:600 var(--size-small) var(--font);text-transform:uppercase;padding:2px var(--space-1);margin-right:var(--space-1);border-radius:var(--radius-control);background:var(--side);border:1px solid var(--line)}
.tag{font-size:var(--size-small);color:var(--accent);border:1px solid var(--accent);border-radius:var(--radius-control);padding:0 var(--space-half);margin-left:var(--space-1);white-space:nowrap}
h4{font-size:var(--size-body);font-weight:600;margin:var(--space-2) 0 var(--space-half);color:var(--muted)}
table{width:100%;border-collapse:collapse;font-size:var(--size-body)}
th,td{text-align:left;padding:var(--space-half) var(--space-1);border-top:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;border-top:0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:var(--size-small)}
pre{background:var(--bg);border:1px solid var(--line);border-radius:var(--radius-row);padding:var(--space-1);overflow:auto;max-height:480px}
details{margin:var(--space-half) 0}summary{cursor:pointer}
:focus-visible{outline:var(--focus-ring);outline-offset:var(--focus-offset)}
.skip{position:absolute;left:var(--space-2);top:-48px;background:var(--panel);padding:var(--space-1) var(--space-2);border:1px solid var(--line);border-radius:var(--radius-control)}.skip:focus{top:var(--space-1)}
`;

const STYLE = `${TOKENS_CSS}${CSS}`;

/** The page's headers: its one inline stylesheet is allowed by its hash; nothing else may load, run or frame it. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Words as the page shows them: escaped, with `quoted` parts as code. */
const words = (s: string) => e(s).replace(/`([^`]+)`/g, '<code>$1</code>');

/** A schema as indented JSON, with its $refs named. */
const shape = (schema: Json) => `<pre>${e(JSON.stringify(schema, null, 2))}</pre>`;

function credentials(op: Operation): string {
  if (op.security.length === 0) return 'No credential.';
  const alternatives = op.security.map((req) => (Object.keys(req).length ? Object.keys(req).join(' and ') : 'none'));
  return `Credentials: ${alternatives.join(', or ')}.`;
}

function parametersTable(op: Operation): string {
  if (op.parameters.length === 0) return '';
  const rows = op.parameters
    .map((p) => {
      const type = (p.schema.type as string | undefined) ?? (p.schema.anyOf ? 'one of several' : '');
      const added = p['x-ferry-addition'] ? '<span class="tag">Ferry\'s addition</span>' : '';
      return `<tr><td><code>${e(p.name)}</code>${added}</td><td>${p.in}</td><td>${p.required ? 'required' : 'optional'}</td><td><code>${e(String(type))}</code></td></tr>`;
    })
    .join('');
  return `<h4>Parameters</h4><table><thead><tr><th scope="col">name</th><th scope="col">in</th><th scope="col">required</th><th scope="col">type</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function operationHtml(method: string, path: string, op: Operation): string {
  const body = op.requestBody
    ? `<h4>Request body</h4>${Object.entries(op.requestBody.content).map(([type, c]) => `<details><summary>${e(type)}</summary>${shape(c.schema)}</details>`).join('')}`
    : '';
  const responses = Object.entries(op.responses)
    .map(([status, r]) => {
      const content = Object.entries(r.content ?? {}).map(([type, c]) => `<details><summary>${e(type)}</summary>${shape(c.schema)}</details>`).join('');
      return `<li><strong>${e(status)}</strong>: ${words(r.description)}${content}</li>`;
    })
    .join('');
  return `<article aria-labelledby="${e(op.operationId)}">
<h3 id="${e(op.operationId)}"><span class="method">${e(method)}</span><code>${e(path)}</code>${op['x-ferry-addition'] ? '<span class="tag">Ferry\'s addition</span>' : ''}</h3>
${op.summary ? `<p>${words(op.summary)}</p>` : ''}<p class="muted">${e(credentials(op))}</p>
${parametersTable(op)}${body}<h4>Responses</h4><ul>${responses}</ul></article>`;
}

export function renderApiPage(doc: OpenApiDocument): string {
  const byTag = new Map<string, { method: string; path: string; op: Operation }[]>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const list = byTag.get(op.tags[0]!) ?? [];
      list.push({ method: method.toUpperCase(), path, op });
      byTag.set(op.tags[0]!, list);
    }
  }
  const tags = [...byTag.keys()].sort();
  const nav = tags
    .map((t) => `<h2>${e(t)}</h2><ul>${byTag.get(t)!.map(({ method, path, op }) => `<li><a href="#${e(op.operationId)}">${e(method)} ${e(path)}</a></li>`).join('')}</ul>`)
    .join('');
  const sections = tags.map((t) => `<section aria-labelledby="tag-${e(t)}"><h2 id="tag-${e(t)}">${e(t)}</h2>${byTag.get(t)!.map(({ method, path, op }) => operationHtml(method, path, op)).join('\n')}</section>`).join('\n');
  const base = doc.servers[0]?.url ?? '/';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${e(doc.info.title)}</title><style>${STYLE}</style></head>
<body><a class="skip" href="#main">Skip to the operations</a><div class="wrap"><nav aria-label="Operations">${nav}</nav><main id="main">
<h1>${e(doc.info.title)} <span class="muted">${e(doc.info.version)}</span></h1>
<p>${words(doc.info.description)}</p>
<p class="muted">Paths are under <code>${e(base)}</code>. The same as an OpenAPI 3.1 document: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>. Operations marked <span class="tag">Ferry's addition</span> are not in the contract.</p>
${sections}
</main></div></body></html>`;
}
