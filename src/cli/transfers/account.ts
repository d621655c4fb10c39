// `ferry login`, `ferry logout`, `ferry teams` and `ferry about`: the agent's
// session and what it is.
import readline from 'node:readline';
import { Writable } from 'node:stream';
import { clientCommand, str, table, UsageError } from './common.js';
import { formatBytes } from '../progress.js';

/** Asks on the terminal; a secret is not echoed. */
async function ask(question: string, secret = false): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = readline.createInterface({ input: process.stdin, output, terminal: true });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, (answer) => resolve(answer));
      muted = secret;
    });
  } finally {
    rl.close();
    if (secret) process.stderr.write('\n');
  }
}

const LOGIN_HELP = `usage: ferry login [--email E] [--password P]

Signs the agent in (the session is kept by the agent, across restarts).
The password can come from FERRY_PASSWORD instead of --password, to keep it out
of the shell history; on a terminal, what is missing is asked for.`;

export const login = clientCommand('login', LOGIN_HELP, { email: { type: 'string' }, password: { type: 'string' } }, async ({ values, client, print }) => {
  const interactive = process.stdin.isTTY === true;
  let email = str(values, 'email');
  if (email === undefined) {
    if (!interactive) throw new UsageError('--email is required');
    email = (await ask('e-mail: ')).trim();
  }
  let password = str(values, 'password') ?? (process.env.FERRY_PASSWORD || undefined);
  if (password === undefined) {
    if (!interactive) throw new UsageError('--password (or FERRY_PASSWORD) is required');
    password = await ask('password: ', true);
  }
  if (email === '' || password === '') throw new UsageError('the e-mail and the password must not be empty');
  const s = await client.login({ email, password });
  const teams = s.teams.map((t) => `  ${t.name} (id ${t.id})`).join('\n');
  print(`signed in as ${s.user.name} <${s.user.email}>\n${s.teams.length > 0 ? `teams:\n${teams}` : 'in no team'}`, s);
});

export const logout = clientCommand('logout', 'usage: ferry logout\n\nSigns the agent out.', {}, async ({ client, print }) => {
  const r = await client.logout();
  print('signed out', r);
});

export const teams = clientCommand('teams', 'usage: ferry teams\n\nThe Teams of the signed-in user (their ids go to "ferry upload --team-id").', {}, async ({ client, print }) => {
  const list = await client.teams();
  const text = list.length === 0
    ? 'in no team'
    : table(
        ['TEAM ID', 'NAME', 'SUBDOMAIN', 'MAX RECIPIENTS', 'EXPIRY DAYS', 'DOWNLOAD LIMIT'],
        list.map((t) => [
          t.id, t.name, t.subdomain, String(t.max_email_recipients),
          t.custom_expiry_enabled ? String(t.custom_expiry_default) : '-',
          t.download_limit_enabled ? String(t.download_limit_default) : '-',
        ]),
      );
  print(text, list);
});

export const about = clientCommand('about', 'usage: ferry about\n\nThe agent\'s version, build and settings.', {}, async ({ client, print }) => {
  const a = await client.about();
  const s = a.settings;
  print(
    [
      `ferry agent ${a.version} (${a.build_stamp})`,
      `agent:    ${client.baseUrl}`,
      `service:  ${a.masv_host}`,
      `build:    commit ${a.backend.hash}, build ${a.backend.build_number}, built ${a.backend.build_time}`,
      `settings: auto-finalize ${s.auto_finalize ? 'on' : 'off'}, chunk size ${formatBytes(s.chunk_size)}, ${s.concurrency} parts in flight`,
    ].join('\n'),
    a,
  );
});
