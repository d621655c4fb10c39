// A transfer of many files that only partly moves, for what follows it (the
// window, its benchmark): a real Package on the service, and an agent.db, written
// before the agent starts, holding one paused upload of it whose first files are
// done (as a run that sent them leaves them) and whose last ones are small files
// on disk, not done. Resumed, the agent sends those and finalizes the Package,
// which on the service holds only them.
import fs from 'node:fs/promises';
import path from 'node:path';
import { openAgentDb } from '../../src/agent/store/db.js';
import { insertUpload, markFileDone, setFileRegistration, type NewUploadFile } from '../../src/agent/store/uploadStore.js';

export interface ServicePackage {
  id: string;
  access_token: string;
  name: string;
  /** The owner's user token, to read the Package back. */
  userToken: string;
}

async function json<T>(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

/** A Team Package on the service, made as the agent makes one (src/client/uploads.ts), by the owner. */
export async function packageOnService(serviceUrl: string, owner: { email: string; password: string }, name: string): Promise<ServicePackage> {
  const { token } = await json<{ token: string }>(`${serviceUrl}/v1/auth`, 'POST', owner);
  const auth = { 'x-user-token': token };
  const team = (await json<{ id: string }[]>(`${serviceUrl}/v1/teams`, 'GET', undefined, auth))[0]!;
  const pkg = await json<{ id: string; access_token: string; name: string }>(`${serviceUrl}/v1/teams/${team.id}/packages`, 'POST', { name, description: '', recipients: [] }, auth);
  return { id: pkg.id, access_token: pkg.access_token, name: pkg.name, userToken: token };
}

/** The Package as the service has it. */
export const servicePackage = (serviceUrl: string, pkg: ServicePackage) =>
  json<{ state: string; total_files: number }>(`${serviceUrl}/v1/packages/${pkg.id}`, 'GET', undefined, { 'x-user-token': pkg.userToken });

export interface ManyFiles {
  /** The upload's id in agent.db. */
  id: string;
  /** Its name (the row's "Upload NAME"). */
  name: string;
  files: number;
  /** The last `moving` files are written to `movingDir` and sent; the others are done. */
  moving: number;
  movingDir: string;
  /** Bytes of each file. */
  size: number;
}

const frame = (i: number) => `frame-${String(i + 1).padStart(5, '0')}.dng`;

/** The row name of file `i` (0-based) as the details show it. */
export const fileName = (m: ManyFiles, i: number) => (i < m.files - m.moving ? `${m.name}/roll-${Math.floor(i / 1000) + 1}/${frame(i)}` : `${m.name}/new/${frame(i)}`);

/** Writes the moving files, then agent.db in `configDir` with the paused upload. The agent must not be running there. */
export async function seedManyFiles(configDir: string, pkg: ServicePackage, m: ManyFiles): Promise<void> {
  const done = m.files - m.moving;
  await fs.mkdir(m.movingDir, { recursive: true });
  const files: NewUploadFile[] = [];
  const mtime = Date.parse('2026-11-01T10:00:00Z');
  for (let i = 0; i < done; i++) {
    files.push({ kind: 'file', local_path: `/media/archive/${fileName(m, i)}`, rel_dir: `${m.name}/roll-${Math.floor(i / 1000) + 1}`, name: frame(i), size: m.size, mtime_ms: mtime });
  }
  for (let i = done; i < m.files; i++) {
    const file = path.join(m.movingDir, frame(i));
    await fs.writeFile(file, Buffer.alloc(m.size, i % 251));
    files.push({ kind: 'file', local_path: file, rel_dir: `${m.name}/new`, name: frame(i), size: m.size, mtime_ms: (await fs.stat(file)).mtimeMs });
  }
  await fs.mkdir(configDir, { recursive: true });
  const db = openAgentDb(path.join(configDir, 'agent.db'));
  try {
    insertUpload(db, { id: m.id, type: 'team', state: 'paused', package_id: pkg.id, package_token: pkg.access_token, name: m.name, package_name: pkg.name, priority: 0, chunk_size: 100 * 1024 * 1024, auto_finalize: 1, delete_after: null, size: m.files * m.size }, files);
    // Done as a run leaves a file: registered (a file id), sent in one part, finalized.
    for (let i = 0; i < done; i++) {
      setFileRegistration(db, m.id, i, { file_id: `fil_sent${String(i).padStart(7, '0')}`, s3_upload_id: null, chunk_size: m.size, part_count: 1 });
      markFileDone(db, m.id, i);
    }
  } finally {
    await db.shut();
  }
}
