// The names of a Package's files and folders, as the service accepts them: one
// rule for the service (registration), the agent (before it walks a folder up)
// and the Portal page (before the first byte).

/**
 * Characters that reorder the text around them (the bidirectional embeddings,
 * overrides and isolates, U+202A-U+202E and U+2066-U+2069): `invoice\u202Egnp.exe`
 * shows as "invoiceexe.png". No real file name needs them.
 */
export const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;

/** Why a file or folder name is refused; undefined when it is fine. */
export function entryNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > 255) return 'must be 1 to 255 characters';
  if (/[\0/\\]/.test(name)) return 'must not contain NUL, "/" or "\\"';
  if (name === '.' || name === '..') return 'must not be "." or ".."';
  if (BIDI_CONTROLS.test(name)) return 'must not contain bidirectional control characters (U+202A-U+202E, U+2066-U+2069), which can disguise a name';
  return undefined;
}
