// A folder of the agent's machine as the app's "Choose files" dialog shows it in
// a browser, which cannot hand over file paths of its own.
import { Type, type Static } from 'typebox';

/** A folder's entries, for the browser's "Choose files" dialog (a browser cannot give paths). */
export const FolderEntry = Type.Object({
  name: Type.String(),
  /** Absolute. */
  path: Type.String(),
  kind: Type.Union([Type.Literal('file'), Type.Literal('folder')]),
  /** Bytes; 0 for a folder. */
  size: Type.Integer(),
});
export type FolderEntry = Static<typeof FolderEntry>;

export const FolderListing = Type.Object({
  path: Type.String(),
  /** null at the root. */
  parent: Type.Union([Type.String(), Type.Null()]),
  /** Folders first, then files, each by name. */
  entries: Type.Array(FolderEntry),
});
export type FolderListing = Static<typeof FolderListing>;

/** What the paths of an upload come to, walked as the upload walks them (Send's "2 files, 1 folder · 1.4 GiB"). */
export const PathsMeasure = Type.Object({
  /** Files, those inside the folders included (operating-system clutter left out, as the upload does). */
  files: Type.Integer(),
  /** Empty folders, which the upload sends as folders of their own. */
  empty_folders: Type.Integer(),
  bytes: Type.Integer(),
});
export type PathsMeasure = Static<typeof PathsMeasure>;
