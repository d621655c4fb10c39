#!/usr/bin/env node
// The layer check (docs/architecture.md, principle 1): fails when an import crosses a layer.
// Each rule names a folder and the folders and packages its files may not import
// (or, with onlyDirs, the only folders they may import).
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

const rules = [
  { from: 'src', denyDirs: ['main', 'renderer'], denyPkgs: ['electron'] },
  { from: 'src/api', denyDirs: ['src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/ipc', 'src/http'] },
  { from: 'src/http', denyDirs: ['src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/sqlite', denyDirs: ['src/api', 'src/http', 'src/hash', 'src/threads', 'src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/sigv4', denyDirs: ['src/api', 'src/http', 'src/hash', 'src/sqlite', 'src/threads', 'src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/native', denyDirs: ['src/api', 'src/http', 'src/hash', 'src/sqlite', 'src/sigv4', 'src/threads', 'src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/threads', denyDirs: ['src/api', 'src/http', 'src/hash', 'src/sqlite', 'src/sigv4', 'src/native', 'src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/hash', denyDirs: ['src/api', 'src/http', 'src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/objectstore', denyDirs: ['src/hosted', 'src/agent', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/hosted', denyDirs: ['src/agent', 'src/client', 'src/cli', 'src/ipc'] },
  { from: 'src/client', denyDirs: ['src/hosted', 'src/agent', 'src/objectstore', 'src/cli', 'src/ipc'] },
  { from: 'src/agent', denyDirs: ['src/hosted', 'src/objectstore', 'src/cli'] },
  // The one format of sizes, times and looks: the CLI, main, the window, the web pages and the service all import it; it imports nothing of Ferry's and runs in browsers.
  { from: 'src/format', onlyDirs: ['src/format'], denyNode: true, denyAllPkgs: true },
  { from: 'main', denyDirs: ['renderer', 'web'] },
  // The service's web page scripts run in the browser: wire types and src/format only, nothing of the window's.
  {
    from: 'web',
    denyDirs: ['main', 'renderer', 'src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/http', 'src/ipc'],
    denyNode: true,
  },
  {
    from: 'renderer',
    denyDirs: ['main', 'web', 'src/hosted', 'src/agent', 'src/objectstore', 'src/client', 'src/cli', 'src/http'],
    denyPkgs: ['electron', 'better-sqlite3', 'undici', 'chokidar', 'fs', 'path', 'os', 'child_process'],
    denyNode: true,
  },
];

const importRe = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') yield* walk(p);
    } else if (/\.(ts|tsx|mts|js|mjs)$/.test(e.name)) yield p;
  }
}

const within = (file, dir) => {
  const rel = path.relative(path.join(root, dir), file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

const problems = [];
let files = 0;
for (const rule of rules) {
  for (const file of walk(path.join(root, rule.from))) {
    files++;
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? m[3];
      const where = `${path.relative(root, file)} imports "${spec}"`;
      if (spec.startsWith('.')) {
        const target = path.resolve(path.dirname(file), spec);
        for (const d of rule.denyDirs ?? []) if (within(target, d)) problems.push(`${where}: ${rule.from} must not import ${d}`);
        if (rule.onlyDirs && !rule.onlyDirs.some((d) => within(target, d))) problems.push(`${where}: ${rule.from} may import only ${rule.onlyDirs.join(', ')}`);
      } else {
        const pkg = spec.replace(/^node:/, '').split('/')[0];
        if (rule.denyNode && spec.startsWith('node:')) problems.push(`${where}: ${rule.from} must not import Node modules`);
        else if (rule.denyAllPkgs || (rule.denyPkgs ?? []).includes(pkg)) problems.push(`${where}: ${rule.from} must not import ${pkg}`);
      }
    }
  }
}

if (problems.length) {
  console.error(`layer check: ${problems.length} import(s) cross a layer:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`layer check: ok (${files} file checks)`);
