// Every source file the docs and the code's comments name exists: a full path
// (`src/agent/engine/uploadJob.ts`, `src/ipc/{contract,names}.ts`), a partial
// one (`services/uploads.ts`) or a bare file name (`uploadPrep.ts`). A file moved
// or renamed without its mentions fails here, with each stale one.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const SKIP = new Set(['node_modules', 'dist', '.git', '.test-results', 'test-results', 'playwright-report']);
/** Files the build writes into dist/ (named by what ships, not by a source file). */
const BUILT = new Set(['agent.mjs', 'ferry.mjs']);

function walk(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) walk(rel, out);
    else out.push(rel);
  }
  return out;
}

const files = walk('');
const fileSet = new Set(files);
const dirSet = new Set(files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, segs) => segs.slice(0, i + 1).join('/'))));
const baseNames = new Set(files.map((f) => path.basename(f)));

/** `a/{b,c}.ts` as `a/b.ts`, `a/c.ts`. */
function expand(p: string): string[] {
  const m = /\{([^{}]*)\}/.exec(p);
  if (!m) return [p];
  return m[1]!.split(',').flatMap((alt) => expand(p.slice(0, m.index) + alt.trim() + p.slice(m.index + m[0].length)));
}

const EXT = String.raw`(?:tsx|ts|mjs|md)`;
const FULL = new RegExp(String.raw`(?<![\w./-])((?:src|main|renderer|web|test|scripts|docs)/(?:[\w./-]|\{[^{}\n]*\})*?\.${EXT})(?![\w])`, 'g');
const PARTIAL = new RegExp(String.raw`(?<![\w./{-])((?:[\w-]+/)+[\w.-]+\.(?:tsx|ts|mjs))(?![\w])`, 'g');
/** A Markdown link to a page or file of the repo, relative to the page: `[text](../README.md#run)`. */
const LINK = /\]\((?!https?:|mailto:|#)([^)\s#]+)(?:#[^)\s]*)?\)/g;
const BARE = new RegExp(String.raw`(?<![\w/.{,-])([a-zA-Z][\w-]*\.(?:tsx|ts|mjs))(?![\w])`, 'g');

/** The text of a line that may name files: all of it in a doc, its comment in code. */
function prose(file: string, line: string): string | undefined {
  if (file.endsWith('.md')) return line;
  const slashes = line.indexOf('//');
  if (slashes >= 0) return line.slice(slashes);
  const t = line.trimStart();
  return t.startsWith('*') || t.startsWith('/*') ? line : undefined;
}

/** The names in `content` (of the file `file`) that name no file of the repo, as `file:line: name`. */
function staleIn(file: string, content: string): string[] {
  const stale: string[] = [];
  content.split('\n').forEach((line, i) => {
    const text = prose(file, line);
    if (text === undefined) return;
    const at = `${file}:${i + 1}`;
    for (const m of text.matchAll(FULL)) {
      for (const p of expand(m[1]!)) if (!p.includes('*') && !fileSet.has(p) && !dirSet.has(p)) stale.push(`${at}: ${p}`);
    }
    for (const m of text.matchAll(PARTIAL)) {
      const p = m[1]!;
      if (/^(src|main|renderer|web|test|scripts|docs|dist|node_modules)\//.test(p)) continue;
      if (!files.some((f) => f.endsWith(`/${p}`))) stale.push(`${at}: ${p}`);
    }
    if (file.endsWith('.md')) {
      for (const m of text.replace(/`[^`]*`/g, '').matchAll(LINK)) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)).replace(/\/$/, '');
        if (!fileSet.has(target) && !dirSet.has(target)) stale.push(`${at}: ${m[1]}`);
      }
    }
    for (const m of text.matchAll(BARE)) if (!baseNames.has(m[1]!) && !BUILT.has(m[1]!)) stale.push(`${at}: ${m[1]}`);
  });
  return stale;
}

/** Every doc, and every source file but this one (whose cases name files that do not exist on purpose). */
const readable = files.filter((f) => f !== 'test/unit/docsPaths.test.ts').filter((f) => (f === 'README.md' || f.startsWith('docs/') ? f.endsWith('.md') : /^(src|main|renderer|web|scripts|test)\/.*\.(tsx?|mjs)$/.test(f)));

describe('file names written in the docs and comments', () => {
  test('every one names a file of the repo', () => {
    expect(readable.length).toBeGreaterThan(100);
    expect(readable.flatMap((f) => staleIn(f, fs.readFileSync(path.join(root, f), 'utf8')))).toEqual([]);
  });

  test('a stale name of each kind is found, in a doc and in a comment; code and existing names are not', () => {
    const doc =
      'See `src/agent/engine/{uploadJob,noSuchJob}.ts`, `engine/nowhere.ts`, `gone.ts`,\n`services/uploads.ts`, `uploadPrep.ts`, `docs/architecture.md` and `dist/desktop/agent.mjs`;\n' +
      '[the API](agent-api.md#errors), [the README](../README.md), [a page](agent-api-notes/gone.md), [a site](https://example.com/x.md), `[code](not/a/link)`.\n';
    expect(staleIn('docs/x.md', doc)).toEqual([
      'docs/x.md:1: src/agent/engine/noSuchJob.ts',
      'docs/x.md:1: engine/nowhere.ts',
      'docs/x.md:1: gone.ts',
      'docs/x.md:3: agent-api-notes/gone.md',
    ]);
    const code = "import { a } from './gone.js'; // as engine/nowhere.ts does\n * see src/old/place.ts\nconst name = 'gone.ts';\n";
    expect(staleIn('src/x.ts', code)).toEqual(['src/x.ts:1: engine/nowhere.ts', 'src/x.ts:2: src/old/place.ts']);
  });
});
