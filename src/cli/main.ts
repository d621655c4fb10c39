// The `ferry` command: one entry point, one module per subcommand.
import { commands } from './commands.js';

// Ferry pins Node 20 (see README); the AWS SDK's notice about Node 22 is not for our users.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// `npm run ferry -- upload ./footage` runs in the package's root; relative paths
// mean the folder npm was called from, as they do for the installed `ferry`.
if (process.env.npm_lifecycle_event === 'ferry' && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

const [name, ...args] = process.argv.slice(2);

function usage(): string {
  const lines = Object.entries(commands).map(([n, c]) => `  ${n.padEnd(16)}${c.summary}`);
  return `usage: ferry <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nRun "ferry <command> --help" for a command's options.`;
}

if (!name || name === '--help' || name === '-h' || name === 'help') {
  console.log(usage());
  process.exit(name ? 0 : 2);
}
const entry = commands[name];
if (!entry) {
  console.error(`ferry: unknown command "${name}"\n\n${usage()}`);
  process.exit(2);
}
try {
  const code = await (await entry.load()).run(args);
  if (typeof code === 'number') process.exitCode = code;
} catch (err) {
  console.error(`ferry ${name}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
