// The files an uploader chose, with the folder each sits in: from the file and
// folder pickers (webkitRelativePath) and from drag and drop (walking dropped
// folders through the entries API).

export interface Item {
  file: File;
  /** The folder inside the Package, `/`-separated, "" for the root. */
  path: string;
  name: string;
}

export const relOf = (i: Item) => (i.path ? `${i.path}/${i.name}` : i.name);

function itemAt(file: File, rel: string): Item {
  const parts = rel.split('/').filter(Boolean);
  const name = parts.pop() ?? file.name;
  return { file, path: parts.join('/'), name };
}

/** From an <input type=file> (with or without webkitdirectory). */
export function fromInput(list: FileList): Item[] {
  return [...list].map((f) => itemAt(f, f.webkitRelativePath || f.name));
}

const fileOf = (e: FileSystemFileEntry) => new Promise<File>((ok, fail) => e.file(ok, fail));

async function readAll(dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = dir.createReader();
  const out: FileSystemEntry[] = [];
  // readEntries answers in batches (100 in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((ok, fail) => reader.readEntries(ok, fail));
    if (batch.length === 0) return out;
    out.push(...batch);
  }
}

async function walk(entry: FileSystemEntry, prefix: string, out: Item[]): Promise<void> {
  const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) out.push(itemAt(await fileOf(entry as FileSystemFileEntry), rel));
  else if (entry.isDirectory) for (const child of await readAll(entry as FileSystemDirectoryEntry)) await walk(child, rel, out);
}

/** From a drop: files, and folders with everything inside them. */
export async function fromDrop(data: DataTransfer): Promise<Item[]> {
  const entries = [...data.items].map((i) => i.webkitGetAsEntry?.()).filter((e): e is FileSystemEntry => !!e);
  if (entries.length === 0) return fromInput(data.files);
  const out: Item[] = [];
  for (const e of entries) await walk(e, '', out);
  return out;
}

/** Adds `more` to `items`, in path order; an entry at a place already taken replaces it. */
export function merge(items: Item[], more: Item[]): Item[] {
  const byRel = new Map(items.map((i) => [relOf(i), i]));
  for (const i of more) byRel.set(relOf(i), i);
  return [...byRel.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, i]) => i);
}
