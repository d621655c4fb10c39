// What every client command of the agent shares: the --agent/--api-key/--json
// flags, parsing into typed values, and the exit codes (0 ok, 1 failed, 2 bad usage).
import { parseArgs } from 'node:util';
import type { Command, OptionSpec } from '../command.js';
import { AgentClient, AgentRequestError, AgentUnreachableError, agentBaseUrl } from '../agentClient.js';
import { AgentErrorCode } from '../../api/agent/errors.js';

/** Bad usage (exit 2), as opposed to a failure (exit 1). */
export class UsageError extends Error {}
/** A failure to report as it is (exit 1). */
export class Failure extends Error {}

export const CLIENT_HELP = `agent options (every command):
  --agent URL          the agent's API (default $FERRY_AGENT_URL or http://127.0.0.1:8080/api/v1)
  --api-key KEY        the agent's API key, when it was started with one (default $FERRY_AGENT_API_KEY)
  --json               print the agent's JSON answer instead of text, for scripts

Exit codes: 0 done, 1 failed, 2 bad usage.`;

export const clientOptions = {
  agent: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies OptionSpec;

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Invocation {
  values: Values;
  positionals: string[];
  client: AgentClient;
  json: boolean;
  /** Prints `data` as JSON with --json, else `text` (when there is any). */
  print(text: string | undefined, data: unknown): void;
}

export function str(v: Values, flag: string): string | undefined {
  const x = v[flag];
  return typeof x === 'string' ? x : undefined;
}

export function required(v: Values, flag: string): string {
  const x = str(v, flag);
  if (x === undefined || x.trim() === '') throw new UsageError(`--${flag} is required`);
  return x.trim();
}

export function int(v: Values, flag: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const x = str(v, flag);
  if (x === undefined) return undefined;
  const n = Number(x.trim());
  if (x.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${flag} must be an integer${min > Number.MIN_SAFE_INTEGER ? ` of at least ${min}` : ''}, got "${x}"`);
  }
  return n;
}

/** A list flag: comma-separated, and/or repeated. */
export function list(v: Values, flag: string): string[] | undefined {
  const x = v[flag];
  if (x === undefined || typeof x === 'boolean') return undefined;
  const items = (Array.isArray(x) ? x : [x]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${flag} needs at least one value`);
  return items;
}

/** Removes the keys whose value is undefined, so bodies carry only what was given. */
export function defined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as T;
}

function explain(err: AgentRequestError): string {
  if (err.code === AgentErrorCode.sessionNil && /session is nil/.test(err.message)) return 'not signed in: run "ferry login" first';
  if (err.code === AgentErrorCode.apiKey) return `${err.message} (pass --api-key or set FERRY_AGENT_API_KEY)`;
  return `${err.message} (${err.status}${err.code !== undefined ? `, code ${err.code}` : ''})`;
}

/**
 * Makes a client command: parses the flags strictly, builds the client, runs
 * `body`, and turns errors into messages and exit codes.
 */
export function clientCommand(
  name: string,
  help: string,
  options: OptionSpec,
  body: (inv: Invocation) => Promise<number | void>,
  allowPositionals = false,
): Command {
  const fullHelp = `${help}\n\n${CLIENT_HELP}`;
  return {
    async run(args) {
      try {
        let parsed;
        try {
          parsed = parseArgs({ args, options: { ...clientOptions, ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        if (parsed.values.help) {
          console.log(fullHelp);
          return 0;
        }
        const values = parsed.values as Values;
        let baseUrl: string;
        try {
          baseUrl = agentBaseUrl(str(values, 'agent'));
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        const client = new AgentClient(baseUrl, str(values, 'api-key') || process.env.FERRY_AGENT_API_KEY || undefined);
        const json = values.json === true;
        const print = (text: string | undefined, data: unknown) => {
          if (json) console.log(JSON.stringify(data, null, 2));
          else if (text !== undefined && text !== '') console.log(text);
        };
        return (await body({ values, positionals: parsed.positionals, client, json, print })) ?? 0;
      } catch (err) {
        if (err instanceof UsageError) {
          console.error(`ferry ${name}: ${err.message}\nRun "ferry ${name.split(' ')[0]} --help" for the options.`);
          return 2;
        }
        if (err instanceof AgentRequestError) console.error(`ferry ${name}: ${explain(err)}`);
        else if (err instanceof AgentUnreachableError || err instanceof Failure) console.error(`ferry ${name}: ${err.message}`);
        else console.error(`ferry ${name}: ${err instanceof Error ? err.message : String(err)}`);
        return 1;
      }
    },
  };
}

/** Left-aligned columns with a header row. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [fmt(header), ...rows.map(fmt)].join('\n');
}
