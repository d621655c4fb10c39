// A watch folder's blacklist: glob patterns matched against the `/`-separated
// path of an entry below the watched folder. A pattern without `/` matches a name
// at any depth (`*.tmp`, `.git`); one with `/` matches the path from the top
// (`renders/*.exr`, `**/cache/**`, `/top.txt` for a name at the top only). An entry is left
// out when it or one of the folders holding it matches. `*` and `?` stay within
// a name, `**` spans folders, `[abc]`, `[!a-z]` and `{a,b}` work as in a shell.
// Matching ignores case on Windows and macOS, whose file systems do too.

export type PathMatcher = (relPath: string) => boolean;

function escapeRe(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/** The regular expression source of one glob (a whole path or name). */
export function globSource(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches zero or more folders; a trailing `**` anything at all.
        const slash = glob[i + 2] === '/';
        out += slash ? '(?:[^/]*(?:/|$))*' : '.*';
        i += slash ? 2 : 1;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = glob.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, (m) => `\\${m}`)}]`;
      i = end;
    } else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else if (c === '\\' && i + 1 < glob.length) out += escapeRe(glob[++i]!);
    else out += escapeRe(c);
  }
  while (braces-- > 0) out += ')';
  return out;
}

export function blacklistMatcher(globs: string[] | undefined, platform: NodeJS.Platform = process.platform): PathMatcher {
  const flags = platform === 'win32' || platform === 'darwin' ? 'i' : '';
  const byName: RegExp[] = [];
  const byPath: RegExp[] = [];
  for (const raw of globs ?? []) {
    const slashed = platform === 'win32' ? raw.replace(/\\/g, '/') : raw;
    const g = slashed.replace(/^\/+/, '').replace(/\/+$/, '');
    if (g === '') continue;
    let re: RegExp;
    try {
      re = new RegExp(`^${globSource(g)}$`, flags);
    } catch {
      continue; // validated on write; an odd leftover matches nothing
    }
    // A leading `/` anchors a pattern to the top, as any `/` in it does.
    (slashed.replace(/\/+$/, '').includes('/') ? byPath : byName).push(re);
  }
  if (byName.length === 0 && byPath.length === 0) return () => false;
  return (relPath) => {
    const segs = relPath.split('/').filter(Boolean);
    for (let i = 0; i < segs.length; i++) {
      if (byName.some((re) => re.test(segs[i]!))) return true;
      const prefix = segs.slice(0, i + 1).join('/');
      if (byPath.some((re) => re.test(prefix))) return true;
    }
    return false;
  };
}

/** Why a glob cannot be used; undefined when it is fine. */
export function globProblem(glob: string): string | undefined {
  try {
    new RegExp(`^${globSource(glob)}$`);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
