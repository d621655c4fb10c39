// What docs/ says of the APIs, read for the OpenAPI tests: the `+` items of the
// "Routes, by family" table (Ferry's additions) and the JSON examples that follow
// a line naming a route (docs/openapi.md, "Examples"). Paths in the docs are
// abbreviated (`.../resume`, `GET`, `PUT /x`); they are resolved against the
// document's own paths.
import fs from 'node:fs';
import path from 'node:path';
import type { OpenApiDocument } from '../../src/http/openapi/document.js';

const METHODS = 'GET|POST|PUT|PATCH|DELETE';

/** The document's operations whose path a docs path (its `{...}` match any one segment) stands for. */
export function matchRoutes(doc: OpenApiDocument, method: string, docsPath: string): string[] {
  const want = docsPath.split('/');
  const found: string[] = [];
  for (const [p, ops] of Object.entries(doc.paths)) {
    const have = p.split('/');
    if (have.length !== want.length || !ops[method.toLowerCase()]) continue;
    if (want.every((w, i) => w === have[i] || (/^\{.*\}$/.test(w) && (/^\{.*\}$/.test(have[i]!) || !/[{}]/.test(have[i]!))))) found.push(`${method} ${p}`);
  }
  return found;
}

export interface DocsAdditions { routes: Set<string>; query: Map<string, Set<string>>; unknown: string[] }

/** `x[y]` as both `x` and `xy`. */
const variants = (s: string): string[] => {
  const m = /\[([^\]]*)\]/.exec(s);
  if (!m) return [s];
  return [...variants(s.slice(0, m.index) + s.slice(m.index + m[0].length)), ...variants(s.slice(0, m.index) + m[1] + s.slice(m.index + m[0].length))];
};

/** The `+` items of a page's "Routes, by family" table, resolved to the document's route keys. */
export function additionsInDocs(file: string, doc: OpenApiDocument): DocsAdditions {
  const text = fs.readFileSync(file, 'utf8');
  const table = text.slice(text.indexOf('**Routes, by family.**')).split('\n\n')[1]!;
  const out: DocsAdditions = { routes: new Set(), query: new Map(), unknown: [] };
  for (const row of table.split('\n').slice(2)) {
    const [, family = '', cell = ''] = row.split(/(?<!\\)\|/).map((c) => c.trim());
    // A family outside the API's prefix (the agent's window transport) is not in the document.
    if (family.includes('outside')) continue;
    const wholeRow = family.includes('`+`');
    let prev = '';
    let prevMethod = '';
    for (const segment of cell.split(/;\s*/)) {
      const spans = [...segment.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      const inSegment: string[] = [];
      const items = spans.map((s) => ({ plus: s.startsWith('+ ') || wholeRow, text: s.replace(/^\+ /, '') }));
      for (let i = 0; i < items.length; i++) {
        const { plus, text } = items[i]!;
        if (text.startsWith('?')) {
          if (!plus) continue;
          const names = [...text.matchAll(/[?&]([a-z_]+)=?/g)].map((m) => m[1]!);
          for (const key of inSegment) for (const n of names) (out.query.get(key) ?? out.query.set(key, new Set()).get(key)!).add(n);
          continue;
        }
        const m = new RegExp(`^(?:(${METHODS})\\b\\s*)?([/.][^\\s]*)?$`).exec(text);
        if (!m || (!m[1] && !m[2]) || /[(|]/.test(text)) continue;
        const method = m[1] ?? prevMethod;
        // A method alone takes the path of the next item of its segment that has one, else the one before.
        const next = items.slice(i + 1).find((it) => new RegExp(`^(?:(?:${METHODS})\\s+)?[/.]`).test(it.text))?.text.replace(new RegExp(`^(${METHODS})\\s+`), '');
        const raw = m[2] ?? next ?? prev;
        prevMethod = method;
        // `...` stands for the longest start of the path before it that makes a route.
        const resolve = (v: string) => {
          if (!v.startsWith('...')) return v;
          const parts = prev.split('/');
          const candidates = parts.map((_p, n) => parts.slice(0, parts.length - n).join('/') + v.slice(3));
          return candidates.find((c) => matchRoutes(doc, method, c).length > 0) ?? prev + v.slice(3);
        };
        const fulls = [...new Set(variants(raw).map((v) => resolve(v.replace(/\?.*$/, ''))))];
        for (const full of fulls) {
          const keys = matchRoutes(doc, method, full);
          if (keys.length === 0) out.unknown.push(`${method} ${full}`);
          for (const key of keys) {
            inSegment.push(key);
            if (plus) out.routes.add(key);
          }
        }
        prev = fulls[0]!;
      }
    }
  }
  return out;
}

export interface DocsExample { file: string; line: number; key: string; part: 'request' | 'response'; status?: string; json: unknown }

/** Every ```json block whose nearest line above names a route: "`POST /uploads` request:" or "`GET /settings` answers 200:". */
export function examplesInDocs(docsDir: string): { examples: DocsExample[]; unnamed: string[] } {
  const examples: DocsExample[] = [];
  const unnamed: string[] = [];
  const files = fs.readdirSync(docsDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'));
  for (const rel of files) {
    const lines = fs.readFileSync(path.join(docsDir, rel), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() !== '```json') continue;
      const end = lines.findIndex((l, n) => n > i && l.trim() === '```');
      let above = i - 1;
      while (above >= 0 && lines[above]!.trim() === '') above--;
      const intro = lines[above] ?? '';
      const route = new RegExp(`\`(${METHODS}) (/[^\`\\s?]*)[^\`]*\``).exec(intro);
      const part = /\b(request|body)\b/i.test(intro) ? 'request' : /\b(answers?|response)\b/i.test(intro) ? 'response' : undefined;
      const body = lines.slice(i + 1, end).join('\n');
      if (!route || !part) unnamed.push(`${rel}:${i + 1}`);
      else {
        const status = /\b([1-5]\d\d)\b/.exec(intro.slice(intro.indexOf(route[0]) + route[0].length))?.[1];
        examples.push({ file: rel, line: i + 1, key: `${route[1]} ${route[2]}`, part, ...(status ? { status } : {}), json: JSON.parse(body) });
      }
      i = end;
    }
  }
  return { examples, unnamed };
}
