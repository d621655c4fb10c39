#!/usr/bin/env node
// The layer check (docs/architecture.md, principle 1), as an allow-list: each
// folder names what its files MAY import, and anything else fails.
//   values:   folders (or single files) whose code they may import
//   types:    folders they may import only with `import type` (or braces of `type` names only):
//             the types cost nothing at run time and carry no code across
//   packages: the packages they may import; NODE stands for Node's built-in modules
// A file always may import its own folder, and follows the rule of its most
// specific folder (src/agent/ui before src/agent, main/preload.ts before main).
// `--root DIR` checks another tree (the tests feed it small ones).
import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';

const NODE = 'node:*';
const LEAVES = ['src/sqlite', 'src/sigv4', 'src/native', 'src/threads', 'src/hash'];

export const rules = {
  // Sizes, times and looks for every program and page, in browsers too: nothing but itself.
  'src/format': { values: [], packages: [] },
  // Wire schemas, shared by servers, clients, the window and the web pages.
  'src/api': { values: ['src/format'], packages: ['typebox', 're2js'] },
  'src/http': { values: ['src/api', 'src/format'], packages: ['ajv', 'ajv-formats', 'fastify', NODE] },
  'src/sqlite': { values: ['src/sigv4', 'src/native'], packages: ['better-sqlite3', NODE] },
  'src/sigv4': { values: ['src/native'], packages: [NODE] },
  'src/native': { values: [], packages: [NODE] },
  'src/threads': { values: [], packages: [NODE] },
  'src/hash': { values: ['src/native', 'src/threads'], packages: [NODE] },
  'src/objectstore': { values: [...LEAVES, 'src/format'], packages: ['pino', 'tsx', NODE] },
  'src/hosted': {
    values: [...LEAVES, 'src/api', 'src/http', 'src/format', 'src/objectstore'],
    packages: ['@aws-sdk/client-s3', '@aws-sdk/s3-request-presigner', '@fastify/rate-limit', '@fastify/type-provider-typebox', '@fastify/websocket', 'better-sqlite3', 'fastify', 'jose', 'kysely', 'nodemailer', 'pg', 'pino', 'typebox', 'undici', 'ws', NODE],
  },
  'src/client': { values: ['src/api', 'src/format'], packages: ['undici', NODE] },
  // The agent reaches the service over HTTP (src/client), never by import; of the window's contract it knows the types.
  'src/agent': {
    values: [...LEAVES, 'src/api', 'src/http', 'src/client', 'src/format'],
    types: ['src/ipc'],
    packages: ['@fastify/type-provider-typebox', '@fastify/websocket', 'better-sqlite3', 'chokidar', 'fastify', 'pino', 'typebox', 'undici', 'yaml', NODE],
  },
  // The window's side of the agent: the handler table answers the contract's channels.
  'src/agent/ui': { values: [...LEAVES, 'src/agent', 'src/api', 'src/http', 'src/client', 'src/format', 'src/ipc'], packages: ['pino', 'typebox', NODE] },
  // The contract: the window, main, the agent and the preload all import it, so it imports only wire shapes.
  'src/ipc': { values: ['src/api'], packages: ['typebox'] },
  // The command line composes every program (and the desktop app's agent process).
  'src/cli': {
    values: [...LEAVES, 'src/api', 'src/http', 'src/client', 'src/format', 'src/ipc', 'src/objectstore', 'src/hosted', 'src/agent'],
    packages: ['pino', 'typebox', NODE],
  },
  // Electron's main process: the contract, the port, the validators; no agent, service or command-line code.
  main: {
    values: ['src/ipc', 'src/format', 'src/http', 'src/api/agent/errors.ts'],
    types: ['src/api'],
    packages: ['electron', 'electron-updater', NODE],
  },
  // The preload runs sandboxed inside the window: the channel names alone, no schemas.
  'main/preload.ts': { values: ['src/ipc/names.ts', 'src/api/agent/errors.ts'], packages: ['electron'] },
  // The window: the contract's types and names, how a transfer's changes apply, the error codes, the format; no Node.
  renderer: {
    values: ['src/format', 'src/ipc/names.ts', 'src/ipc/transfers.ts', 'src/api/agent/errors.ts'],
    types: ['src/ipc', 'src/api'],
    packages: ['react', 'react-dom', 'zustand', '@tanstack/react-virtual', 'virtual:ferry-tokens.css'],
  },
  // The service's page scripts, in a browser: wire types, the format, and the two checks the service runs too.
  web: {
    values: ['src/format', 'src/api/hosted/entryNames.ts', 'src/api/hosted/patterns.ts'],
    types: ['src/api'],
    packages: [],
  },
};

// import/export ... from 'x' (group 1: `type`, group 2: the clause, group 3: the path), import('x') (4), import 'x' (5).
const importRe = /(?:^|[\s;])(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]|(typeof\s+)?import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

/** Every import of a source text: its path and whether it brings types only. */
export function importsOf(text) {
  const found = [];
  for (const m of text.matchAll(importRe)) {
    if (m[3] !== undefined) {
      const clause = m[2].trim();
      // `import { type A, type B } from` brings types only; a default import or one plain name brings code.
      const names = /^\{([^}]*)\}$/.exec(clause)?.[1].split(',').map((n) => n.trim()).filter(Boolean);
      found.push({ spec: m[3], typeOnly: !!m[1] || (!!names && names.length > 0 && names.every((n) => n.startsWith('type '))) });
    } else if (m[5] !== undefined) found.push({ spec: m[5], typeOnly: !!m[4] });
    else found.push({ spec: m[6], typeOnly: false });
  }
  return found;
}

const stripExt = (p) => p.replace(/\.(ts|tsx|mts|js|mjs|cjs|jsx)$/, '');
const isFile = (entry) => /\.(ts|tsx|mts|mjs)$/.test(entry);
/** Whether a repository-relative path lies in a rule's entry: a folder, or one file (any extension of it). */
const inEntry = (rel, entry) => (isFile(entry) ? stripExt(rel) === stripExt(entry) : rel === entry || rel.startsWith(`${entry}/`));

const nodeModules = new Set(builtinModules);
const packageOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

/** The rule a file follows: that of its most specific folder. */
function ruleFor(rel) {
  let best;
  for (const from of Object.keys(rules)) if (inEntry(rel, from) && (!best || from.length > best.length)) best = from;
  return best;
}

/** The problems of one file's imports (`rel`: its path from the root, with /). */
export function check(rel, text) {
  const from = ruleFor(rel);
  if (!from) return [];
  const rule = rules[from];
  const own = isFile(from) ? path.posix.dirname(from) : from;
  const problems = [];
  for (const { spec, typeOnly } of importsOf(text)) {
    const where = `${rel} imports "${spec}"`;
    if (spec.startsWith('.')) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec));
      if (inEntry(target, own) || rule.values.some((e) => inEntry(target, e))) continue;
      if ((rule.types ?? []).some((e) => inEntry(target, e))) {
        if (!typeOnly) problems.push(`${where}: ${from} may import it only with "import type"`);
        continue;
      }
      const allowed = [...rule.values, ...(rule.types ?? []).map((t) => `${t} (types)`)];
      problems.push(`${where}: ${from} may import only ${allowed.length ? allowed.join(', ') : 'itself'}`);
    } else {
      const bare = spec.replace(/^node:/, '');
      const builtin = spec.startsWith('node:') || nodeModules.has(packageOf(bare));
      if (builtin ? rule.packages.includes(NODE) : rule.packages.includes(packageOf(spec))) continue;
      problems.push(`${where}: ${from} may not import ${builtin ? "Node's modules" : `the package ${packageOf(spec)}`}`);
    }
  }
  return problems;
}

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') yield* walk(p);
    } else if (/\.(ts|tsx|mts|js|mjs)$/.test(e.name)) yield p;
  }
}

/** Checks every file under the rules' folders of `root`. */
export function checkTree(root) {
  const problems = [];
  let files = 0;
  for (const top of ['src', 'main', 'renderer', 'web']) {
    for (const file of walk(path.join(root, top))) {
      const rel = path.relative(root, file).split(path.sep).join('/');
      if (!ruleFor(rel)) {
        problems.push(`${rel}: no layer rule names its folder (add one to scripts/check-layers.mjs)`);
        continue;
      }
      files++;
      problems.push(...check(rel, fs.readFileSync(file, 'utf8')));
    }
  }
  return { files, problems };
}

if (import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const i = process.argv.indexOf('--root');
  const root = i > 0 ? path.resolve(process.argv[i + 1]) : path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const { files, problems } = checkTree(root);
  if (problems.length) {
    console.error(`layer check: ${problems.length} import(s) cross a layer:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`layer check: ok (${files} files)`);
}
