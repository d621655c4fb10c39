// `ferry start`: the one command to try Ferry on one machine. It runs the hosted
// service with its embedded S3 store in the user's data dir and, on the first
// run, creates an owner, a Team and an API key, then says how to use them.
import fs from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import type { Command } from './command.js';
import { parseFlags, untilSignal } from './command.js';
import { serveOptions } from './serve.js';
import { resolveHostedConfig } from '../hosted/config.js';
import type { Db } from '../hosted/db/open.js';
import { startHostedService } from '../hosted/server.js';
import { addMember, createTeam, createUser } from '../hosted/services/accounts.js';
import { issueApiKey } from '../hosted/services/apiKeys.js';
import { newSecret } from '../hosted/ids.js';
import { resolveAgentConfig } from '../agent/config.js';
import { startAgent, type RunningAgent } from '../agent/index.js';
import { rendererDir } from '../agent/server/staticUi.js';
import { desktopRuntime, openDesktop, type Desktop } from './desktop.js';

const HELP = `usage: ferry start [options]

Runs the hosted service, its S3 store and the local agent (signed in as the
first owner), with data in $XDG_DATA_HOME/ferry/hosted (the agent's in DATA_DIR/agent).
The first run creates the owner admin@ferry.local with a random password and an
API key, prints them once and keeps them in DATA_DIR/first-owner.txt (mode 600).

Takes the options of "ferry serve" (see "ferry serve --help"), e.g.
  --data-dir DIR  --listen HOST:PORT  --s3-listen HOST:PORT
  --log-level LEVEL   default warn here, so the terminal stays readable
  --agent-listen HOST:PORT   where the local agent listens (default 127.0.0.1:8080)
  --browser       the app in the browser even where the desktop app could open`;

const FIRST_OWNER = 'admin@ferry.local';

interface FirstOwner { email: string; password: string; apiKey: string; teamId: string; subdomain: string }

/** On an empty database: the owner, their Team and an API key, in one transaction. */
async function createFirstOwner(db: Db): Promise<FirstOwner | undefined> {
  return db.transaction().execute(async (trx) => {
    if (await trx.selectFrom('users').select('id').limit(1).executeTakeFirst()) return undefined;
    const password = newSecret(15);
    const user = await createUser(trx, FIRST_OWNER, password, 'Admin');
    const team = await createTeam(trx, 'Ferry');
    await addMember(trx, team.id, user.id, 'owner');
    const { secret } = await issueApiKey(trx, { teamId: team.id, userId: user.id, name: 'ferry start' });
    return { email: user.email, password, apiKey: secret, teamId: team.id, subdomain: team.subdomain };
  });
}

function banner(o: { url: string; s3Url: string; agentUrl: string; appUrl?: string; dataDir: string; file: string; fileExists: boolean; first?: FirstOwner }): string {
  const ferry = `npm run ferry -- admin`;
  const dd = `--data-dir ${JSON.stringify(o.dataDir)}`;
  const pass = o.first?.password ?? 'PASSWORD';
  const key = o.first?.apiKey ?? 'API_KEY';
  const lines = [
    'Ferry is running.',
    '',
    ...(o.appUrl ? [`  the app    ${o.appUrl}   (open it in your browser)`] : []),
    `  service    ${o.url}`,
    `  S3 store   ${o.s3Url}   (its keys: ${ferry} store-credentials ${dd})`,
    `  agent      ${o.agentUrl}`,
    `  data dir   ${o.dataDir}`,
    '',
  ];
  if (o.first) {
    lines.push(
      `First run: created the owner of the Team "Ferry" (subdomain ${o.first.subdomain}):`,
      `  e-mail     ${o.first.email}`,
      `  password   ${o.first.password}`,
      `  API key    ${o.first.apiKey}`,
      `They are shown only now, and kept in ${o.file} (readable by you only).`,
    );
  } else if (o.fileExists) {
    lines.push(`The first owner's e-mail, password and API key are in ${o.file}.`);
  } else {
    lines.push(`See the accounts with: ${ferry} list ${dd}`);
  }
  lines.push(
    '',
    'Try:',
    `  curl -s -X POST ${o.url}/v1/auth -H 'content-type: application/json' -d '{"email":"${o.first?.email ?? FIRST_OWNER}","password":"${pass}"}'`,
    `  curl -s ${o.url}/v1/teams -H 'X-API-KEY: ${key}'`,
    `  ${ferry} list ${dd}`,
    `  FERRY_ADMIN_PASSWORD=... ${ferry} add-user ${dd} --team ${o.first?.subdomain ?? 'TEAM'} --email you@example.com --role admin`,
    `  ${ferry} create-api-key ${dd} --team ${o.first?.subdomain ?? 'TEAM'} --email you@example.com`,
    '',
    'Send and fetch files through the agent (signed in as the first owner):',
    `  export FERRY_AGENT_URL=${o.agentUrl}`,
    `  npm run ferry -- teams`,
    `  npm run ferry -- upload ./some-folder --team-id ${o.first?.teamId ?? 'TEAM_ID'}`,
    `  npm run ferry -- download LINK_URL --dst-folder ./downloads`,
    '',
    'Stop with Ctrl+C.',
  );
  return lines.join('\n');
}

/** The first owner's credentials, kept once for the user (readable by them only). */
async function writeFirstOwner(file: string, first: FirstOwner): Promise<void> {
  const text = [`e-mail   ${first.email}`, `password ${first.password}`, `API key  ${first.apiKey}`, `team     ${first.teamId} (subdomain ${first.subdomain})`, ''];
  await fs.writeFile(file, text.join('\n'), { mode: 0o600 });
  await fs.chmod(file, 0o600);
}

/** The API key kept in first-owner.txt, if it is there. */
async function apiKeyIn(file: string): Promise<string | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return /^API key +(\S+)$/m.exec(text)?.[1];
}

export const start: Command = {
  async run(args) {
    const values = parseFlags(args, { ...serveOptions, 'agent-listen': { type: 'string' }, browser: { type: 'boolean' } }, HELP).values as Record<string, string | boolean | undefined>;
    const desktop: Desktop = values.browser ? { ok: false, why: '--browser was given' } : desktopRuntime();
    const logLevel = values['log-level'] ?? (process.env.FERRY_LOG_LEVEL || 'warn');
    const config = resolveHostedConfig({ ...values, 'log-level': logLevel });
    const log = pino({ level: config.logLevel });
    const running = await startHostedService(config, log);
    // Listen for signals before saying we are ready: a quick Ctrl+C must not kill us mid-way.
    const signalled = untilSignal();
    const file = path.join(config.dataDir, 'first-owner.txt');
    let agent: RunningAgent | undefined;
    const stopAll = async () => {
      await agent?.close();
      await running.close();
    };
    try {
      const first = await createFirstOwner(running.ctx.db);
      if (first) await writeFirstOwner(file, first);
      if (desktop.ok) {
        // The desktop app runs the agent itself; it signs in as the first owner the first time.
        const app = openDesktop(desktop, running.url, first?.apiKey ?? (await apiKeyIn(file)));
        console.log(`Ferry is open in its desktop window, on the service ${running.url} (data in ${config.dataDir}). Quit the app or press Ctrl+C to stop.`);
        const appExited = new Promise<'app quit'>((r) => app.once('exit', () => r('app quit')));
        const why = await Promise.race([signalled, appExited]);
        log.info({ why }, 'shutting down');
        if (app.exitCode === null && app.signalCode === null) {
          app.kill('SIGTERM');
          await appExited;
        }
        await running.close();
        return 0;
      }
      console.log(`The desktop app cannot start here: ${desktop.why}. The same app is in your browser, at the address below.`);
      const agentConfig = resolveAgentConfig(
        {
          listen: (values['agent-listen'] as string | undefined) ?? '127.0.0.1:8080',
          'config-dir': path.join(config.dataDir, 'agent'),
          'hosted-url': running.url,
          'log-level': logLevel,
          // The app's window in the browser, where it is built (npm install builds it).
          ui: rendererDir() !== undefined,
        },
        {},
      );
      agent = await startAgent(agentConfig, log.child({ component: 'agent' }));
      // The session is kept in the agent's database: signing in once is enough.
      if (first) await agent.services.session.loginWithApiKey(first.apiKey);
      const fileExists = await fs.access(file).then(() => true, () => false);
      const appUrl = agentConfig.ui ? agent.url.replace(/\/api\/v1$/, '/') : undefined;
      console.log(banner({ url: running.url, s3Url: running.s3Url, agentUrl: agent.url, appUrl, dataDir: config.dataDir, file, fileExists, first }));
    } catch (err) {
      await stopAll();
      throw err;
    }
    const signal = await Promise.race([signalled, agent.stopped.then(() => 'shutdown' as const)]);
    log.info({ signal }, 'shutting down');
    await stopAll();
    return 0;
  },
};
