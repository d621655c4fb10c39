// The shape of a subcommand, and a parser that turns --kebab-case flags into values.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface Command {
  /** Resolves to an exit code, or to nothing for a long-running server that exits on a signal. */
  run(args: string[]): Promise<number | void>;
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Parses args strictly; `--help` prints the help text and exits. */
export function parseFlags(args: string[], options: OptionSpec, help: string, allowPositionals = false) {
  const parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
  if (parsed.values.help) {
    console.log(help);
    process.exit(0);
  }
  return parsed;
}

/** Resolves when SIGINT or SIGTERM arrives. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (s: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(s);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/**
 * A command made of actions (`ferry uploads ls`, `ferry gateway register`): no action
 * prints the help and exits 2, `--help` exits 0, an unknown one says so.
 */
export function commandGroup(name: string, help: string, actions: Record<string, Command>): Command {
  return {
    async run(args) {
      const [action, ...rest] = args;
      if (action === undefined || action === '--help' || action === '-h' || action === 'help') {
        console.log(help);
        return action === undefined ? 2 : 0;
      }
      const cmd = actions[action];
      if (!cmd) {
        console.error(`ferry ${name}: unknown action "${action}"\n\n${help}`);
        return 2;
      }
      return cmd.run(rest);
    },
  };
}
