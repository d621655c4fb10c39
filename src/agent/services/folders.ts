// Folders of the agent's machine, listed for the app's "Choose files" dialog in a
// browser (which cannot hand over paths of its own). The agent reads whatever
// paths an upload names anyway; this only shows them.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FolderEntry, FolderListing, PathsMeasure } from '../../api/agent/folders.js';
import { planUpload } from '../engine/uploadPlan.js';
import type { AgentDb } from '../store/db.js';
import { dropStage } from '../store/walkStage.js';
import { AgentError, invalid, notFound } from '../errors.js';
import { AgentErrorCode } from '../../api/agent/errors.js';
import { errnoWords, shownPath } from '../engine/requestPath.js';

/** A folder of more entries is cut there, folders first. */
const MAX_ENTRIES = 10_000;
/** Entries stat'ed at once. */
const STATS_AT_ONCE = 64;

const byName = (a: FolderEntry, b: FolderEntry) => a.name.localeCompare(b.name, undefined, { numeric: true, sensitivity: 'base' });

export function createFoldersService(db: AgentDb) {
  return {
    /** The entries of `dir` (the home folder when omitted), folders first; symlinks are followed, entries that cannot be read are left out. */
    async list(dir?: string): Promise<FolderListing> {
      const where = dir === undefined || dir.trim() === '' ? os.homedir() : dir;
      if (!path.isAbsolute(where)) throw invalid('path must be absolute');
      const abs = path.resolve(where);
      let names: string[];
      try {
        names = await fs.readdir(abs);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') throw notFound(`folder ${abs}`);
        if (code === 'ENOTDIR') throw invalid(`${abs} is not a folder`);
        if (code === 'EACCES' || code === 'EPERM') throw new AgentError(403, AgentErrorCode.forbidden, `the agent may not read ${abs}`);
        // A loop of links, a path too long...: said in words, as for any path a request names.
        if (code) throw invalid(errnoWords(code, shownPath(abs), 'path', { field: 'path', kind: 'folder' }));
        throw err;
      }
      const entries: FolderEntry[] = [];
      for (let i = 0; i < names.length; i += STATS_AT_ONCE) {
        const batch = await Promise.all(
          names.slice(i, i + STATS_AT_ONCE).map(async (name): Promise<FolderEntry | undefined> => {
            const p = path.join(abs, name);
            const st = await fs.stat(p).catch(() => undefined);
            if (!st || (!st.isDirectory() && !st.isFile())) return undefined;
            return { name, path: p, kind: st.isDirectory() ? 'folder' : 'file', size: st.isFile() ? st.size : 0 };
          }),
        );
        for (const e of batch) if (e) entries.push(e);
      }
      const folders = entries.filter((e) => e.kind === 'folder').sort(byName);
      const files = entries.filter((e) => e.kind === 'file').sort(byName);
      const parent = path.dirname(abs);
      return { path: abs, parent: parent === abs ? null : parent, entries: [...folders, ...files].slice(0, MAX_ENTRIES) };
    },

    /**
     * What an upload of `paths` would send: the same checks and walk as the upload
     * (its entries staged as the upload's would be), so that Send shows the size
     * of a folder and a path it would refuse is said before Send.
     */
    async measure(paths: string[]): Promise<PathsMeasure> {
      const plan = await planUpload(db, paths);
      dropStage(db, plan.stage);
      return { files: plan.files, empty_folders: plan.count - plan.files, bytes: plan.size };
    },
  };
}
export type FoldersService = ReturnType<typeof createFoldersService>;
