// `ferry start`: the one command to try Ferry on one machine, "Try it on this
// computer": the hosted service with its embedded S3 store in the user's data dir
// (its first start creates an owner, a Team and an API key) and the agent signed
// in as that owner. The desktop app runs both in its agent's process; without
// it, they run here and the app is served to the browser, with a banner on how
// to use them.
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { Command } from './command.js';
import { parseFlags, untilSignal } from './command.js';
import { serveOptions } from './serve.js';
import { resolveHostedConfig } from '../hosted/config.js';
import { rendererDir } from '../agent/server/staticUi.js';
import { desktopRuntime, openDesktop, type Desktop } from './desktop.js';
import { FIRST_OWNER, type FirstOwner } from './thisComputer.js';
import { runAgent } from './runAgent.js';

const HELP = `usage: ferry start [options]

Runs the hosted service, its S3 store and the local agent (signed in as the
first owner), with data in $XDG_DATA_HOME/ferry/hosted (the agent's in DATA_DIR/agent).
The first run creates the owner admin@ferry.local with a random password and an
API key, prints them once and keeps them in DATA_DIR/first-owner.txt (mode 600).

Webhooks and cloud connections may reach this computer's and its network's
addresses (--allow-private-targets true, not cloud metadata services) unless that
option is given.

Takes the options of "ferry serve" (see "ferry serve --help"), e.g.
  --data-dir DIR  --listen HOST:PORT  --s3-listen HOST:PORT
  --log-level LEVEL   default warn here, so the terminal stays readable
  --agent-listen HOST:PORT   where the local agent listens (default 127.0.0.1:8080)
  --browser       the app in the browser even where the desktop app could open`;

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

/** The one line `ferry start` prints where the desktop app cannot start: the app is in the browser where its window is built. */
export function noDesktopLine(why: string, ui: boolean): string {
  return ui
    ? `The desktop app cannot start here: ${why}. The same app is in your browser, at the address below.`
    : `The desktop app cannot start here: ${why}; nor can the app open in the browser: its window is not built in this folder (npm run build builds it). The service and the agent run below.`;
}

export const start: Command = {
  async run(args) {
    const values = parseFlags(args, { ...serveOptions, 'agent-listen': { type: 'string' }, browser: { type: 'boolean' } }, HELP).values as Record<string, string | boolean | undefined>;
    const desktop: Desktop = values.browser ? { ok: false, why: '--browser was given' } : desktopRuntime();
    const logLevel = (values['log-level'] as string | undefined) ?? (process.env.FERRY_LOG_LEVEL || 'warn');
    const { 'agent-listen': agentListen, browser: _browser, ...serve } = values;
    const serveFlags = { ...serve, 'log-level': logLevel };
    const { dataDir } = resolveHostedConfig(serveFlags);
    const log = pino({ level: logLevel });
    // Listen for signals before saying we are ready: a quick Ctrl+C must not kill us mid-way.
    const signalled = untilSignal();
    if (desktop.ok) {
      // The desktop app runs the agent, and the service on this computer beside it.
      const app = openDesktop(desktop, serveFlags);
      console.log(`Ferry is open in its desktop window, on a service on this computer (data in ${dataDir}). Quit the app or press Ctrl+C to stop.`);
      const appExited = new Promise<'app quit'>((r) => app.once('exit', () => r('app quit')));
      const why = await Promise.race([signalled, appExited]);
      log.info({ why }, 'shutting down');
      if (app.exitCode === null && app.signalCode === null) {
        app.kill('SIGTERM');
        await appExited;
      }
      return 0;
    }
    // The app's window in the browser, where it is built (npm install builds it).
    const ui = rendererDir() !== undefined;
    console.log(noDesktopLine(desktop.why, ui));
    const flags = {
      listen: (agentListen as string | undefined) ?? '127.0.0.1:8080',
      'config-dir': path.join(dataDir, 'agent'),
      'this-computer': true,
      'log-level': logLevel,
      ui,
    };
    let told = false;
    const why = await runAgent({
      flags,
      serveFlags,
      log,
      until: signalled,
      started({ agent, service }) {
        if (told || !service) return;
        told = true;
        const appUrl = agent.ctx.config.ui && agent.url ? agent.url.replace(/\/api\/v1$/, '/') : undefined;
        const fileExists = fs.existsSync(service.ownerFile);
        console.log(banner({ url: service.url, s3Url: service.s3Url, agentUrl: agent.url ?? '', appUrl, dataDir, file: service.ownerFile, fileExists, first: service.first }));
      },
    });
    log.info({ why }, 'shut down');
    return 0;
  },
};
