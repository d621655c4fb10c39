// Links that open the app on Receive: `ferry://receive?url=<Link URL>`, `ferry://<Link URL without
// its scheme>`, or a Link URL itself (`https://host/l/<id>?secret=...`), given on the command line,
// handed over by a second instance, or by macOS's open-url.
const LINK = /^https?:\/\/[^\s/]+(\/[^\s?]*)?\/l\/[^/?\s]+\?secret=[^\s]+$/;

/** The Link URL a command-line argument or opened URL stands for, or undefined. */
export function linkFrom(arg: string): string | undefined {
  const a = arg.trim();
  if (LINK.test(a)) return a;
  if (!a.toLowerCase().startsWith('ferry://')) return undefined;
  let u: URL;
  try {
    u = new URL(a);
  } catch {
    return undefined;
  }
  const given = u.searchParams.get('url');
  if (u.hostname === 'receive' && given) return LINK.test(given) ? given : undefined;
  const rest = `https://${a.slice('ferry://'.length)}`;
  return LINK.test(rest) ? rest : undefined;
}

/** The first Link among the arguments (a second instance's argv, or this one's). */
export const linkInArgs = (argv: string[]) => argv.map(linkFrom).find((l) => l !== undefined);
