// Send's line over the chosen items, apart from the screen so that it is tested
// without the DOM.
import { bytes } from '../format.js';
import type { PathsMeasure } from '../../src/api/agent/folders.js';

/** What summary needs of a chosen item (ChooseFiles.tsx `Chosen`); a file's size is -1 when not known. */
interface Item { kind: 'file' | 'folder'; size: number }

/**
 * What is chosen comes to: "2 files · 1.4 GiB", "2 files, 1 folder · 1.4 GiB in 152 files".
 * The agent walks the folders as the upload will (`fs.measure`, `measured`): while it
 * does (a folder of a million files takes it a while) the line says so; when it cannot,
 * the folders are named, not sized ("… · 25 B + folder").
 */
export function summary(items: Item[], measured?: PathsMeasure, measuring = false): string {
  const files = items.filter((i) => i.kind === 'file');
  const folders = items.length - files.length;
  const plural = (n: number, word: string) => `${n.toLocaleString('en')} ${n === 1 ? word : `${word}s`}`;
  const count = [files.length > 0 && plural(files.length, 'file'), folders > 0 && plural(folders, 'folder')].filter(Boolean).join(', ');
  if (measured) return `${count} · ${bytes(measured.bytes)}${folders > 0 ? ` in ${plural(measured.files, 'file')}` : ''}`;
  if (measuring && folders > 0) return `${count} · counting the files…`;
  if (files.length === 0 || files.some((f) => f.size < 0)) return count;
  const size = bytes(files.reduce((sum, f) => sum + f.size, 0));
  return `${count} · ${size}${folders > 0 ? ` + ${folders === 1 ? 'folder' : 'folders'}` : ''}`;
}
