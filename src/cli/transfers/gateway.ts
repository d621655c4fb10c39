// `ferry gateway ...`: the agent's storage gateway routes from the command line
// (connection, register, ls, update, unregister), with --json like the other commands.
import path from 'node:path';
import { commandGroup, type Command } from '../command.js';
import type { GatewayRecord } from '../../api/agent/storageGateway.js';
import { formatBytes } from '../progress.js';
import { clientCommand, defined, required, str, table, UsageError, type Values } from './common.js';

const HELP = `usage: ferry gateway <action> [options]

A storage gateway exposes a folder of this machine (a NAS or SAN mount) to the
service as the storage of a cloud connection with provider storage_gateway. The
connection's id and secret come from the service's answer when it is created:
"connection" makes one (an Owner or Admin of the Team, signed in on the agent).

actions:
  connection --name NAME --permissions r|w [--team ID]
                          make a storage gateway connection on the service; prints its
                          id and its secret, which the service shows this once
  register --id ID --name NAME --permissions r|w --root-path DIR [--secret S]
           [--user-id N] [--group-id N]
                          register a gateway (the secret may come from $FERRY_GATEWAY_SECRET);
                          w receives deliveries into DIR, r serves files of DIR
  ls [ID]                 every gateway, or one with its latest transfers
  update ID [--root-path DIR] [--user-id N|none] [--group-id N|none]
                          change the root or the owner of files written next
  unregister ID           disconnect the gateway and forget it (delivered files stay)

Run "ferry gateway <action> --help" for its agent options (--agent, --api-key, --json).`;

/** A path given on the command line, made absolute against the command's folder (as ferry upload does). */
const absolute = (p: string | undefined) => (p === undefined ? undefined : path.resolve(p));

/** --user-id / --group-id: an id, or "none" (also -1) to remove the override where allowed. */
function ownerId(v: Values, flag: string, removable: boolean): number | undefined {
  const x = str(v, flag);
  if (x === undefined) return undefined;
  const t = x.trim();
  if (removable && (t === 'none' || t === '-1')) return -1;
  const n = Number(t);
  if (t === '' || !Number.isSafeInteger(n) || n < 0 || n > 4_294_967_294) {
    throw new UsageError(`--${flag} must be a user or group number${removable ? ', or none to remove it' : ''}, got "${x}"`);
  }
  return n;
}

function oneId(positionals: string[], optional = false): string | undefined {
  if (positionals.length > 1) throw new UsageError('name one gateway id');
  if (!optional && positionals.length === 0) throw new UsageError('name the gateway id');
  return positionals[0];
}

const owner = (g: GatewayRecord) => (g.user_id === null && g.group_id === null ? '' : `${g.user_id ?? '-'}:${g.group_id ?? '-'}`);

function listing(all: GatewayRecord[]): string {
  if (all.length === 0) return 'no storage gateways';
  return table(
    ['GATEWAY ID', 'STATE', 'PERM', 'OWNER', 'ROOT', 'NAME'],
    all.map((g) => [g.id, g.state, g.permissions, owner(g), g.root_path, g.name]),
  );
}

function details(g: GatewayRecord): string {
  const lines = [
    `gateway ${g.id}: ${g.state}${g.connected_at ? ` since ${g.connected_at}` : ''}`,
    `name: ${g.name}`,
    `root: ${g.root_path} (${g.permissions === 'w' ? 'w: receives deliveries' : 'r: serves files'})`,
    `service: ${g.service_url}`,
  ];
  if (owner(g)) lines.push(`files written as uid:gid ${owner(g)}`);
  if (g.last_error) lines.push(`last error: ${g.last_error}`);
  if (g.next_attempt_at) lines.push(`next try: ${g.next_attempt_at}`);
  if (g.transfers.length > 0) {
    lines.push('');
    lines.push(
      table(
        ['TRANSFER', 'DIRECTION', 'STATE', 'FILES', 'BYTES', 'PACKAGE'],
        g.transfers.map((t) => [
          t.transfer_id,
          t.direction,
          t.state,
          `${t.files_done}/${t.files_total}`,
          `${formatBytes(t.bytes_done)} / ${formatBytes(t.bytes_total)}`,
          `${t.package_name}${t.error ? ` (${t.error})` : ''}`,
        ]),
      ),
    );
  }
  return lines.join('\n');
}

const actions: Record<string, Command> = {
  connection: clientCommand(
    'gateway connection',
    'usage: ferry gateway connection --name NAME --permissions r|w [--team ID]',
    { name: { type: 'string' }, permissions: { type: 'string' }, team: { type: 'string' } },
    async ({ client, print, values: v }) => {
      const permissions = required(v, 'permissions');
      if (permissions !== 'r' && permissions !== 'w') throw new UsageError(`--permissions must be r or w, got "${permissions}"`);
      const c = await client.newGatewayConnection(defined({ name: required(v, 'name'), permissions, team_id: str(v, 'team') }));
      print(
        [
          `made storage gateway connection ${c.id} (${c.name}) in Team ${c.team_id}`,
          `secret: ${c.secret}`,
          'The service shows this secret once. Register with:',
          `  ferry gateway register --id ${c.id} --name '${c.name.replace(/'/g, "'\\''")}' --permissions ${c.permissions} --root-path DIR   (the secret in $FERRY_GATEWAY_SECRET)`,
        ].join('\n'),
        c,
      );
    },
  ),
  register: clientCommand(
    'gateway register',
    'usage: ferry gateway register --id ID --name NAME --permissions r|w --root-path DIR [--secret S] [--user-id N] [--group-id N]',
    {
      id: { type: 'string' },
      name: { type: 'string' },
      permissions: { type: 'string' },
      'root-path': { type: 'string' },
      secret: { type: 'string' },
      'user-id': { type: 'string' },
      'group-id': { type: 'string' },
    },
    async ({ client, print, values: v }) => {
      const permissions = required(v, 'permissions');
      if (permissions !== 'r' && permissions !== 'w') throw new UsageError(`--permissions must be r or w, got "${permissions}"`);
      const secret = str(v, 'secret') ?? process.env.FERRY_GATEWAY_SECRET;
      if (!secret) throw new UsageError('--secret (or $FERRY_GATEWAY_SECRET) is required: the secret the service answered for the connection');
      const g = await client.registerGateway(
        defined({
          id: required(v, 'id'),
          name: required(v, 'name'),
          permissions,
          root_path: absolute(required(v, 'root-path'))!,
          secret,
          user_id: ownerId(v, 'user-id', false),
          group_id: ownerId(v, 'group-id', false),
        }),
      );
      print(`registered gateway ${g.id} (${g.state})\n${details(g)}`, g);
    },
  ),
  ls: clientCommand(
    'gateway ls',
    'usage: ferry gateway ls [ID]',
    {},
    async ({ client, print, positionals }) => {
      const id = oneId(positionals, true);
      const all = await client.listGateways();
      if (id === undefined) return print(listing(all), all);
      const g = all.find((x) => x.id === id);
      if (!g) {
        console.error(`ferry gateway ls: no storage gateway ${id}`);
        return 1;
      }
      print(details(g), g);
    },
    true,
  ),
  update: clientCommand(
    'gateway update',
    'usage: ferry gateway update ID [--root-path DIR] [--user-id N|none] [--group-id N|none]',
    { 'root-path': { type: 'string' }, 'user-id': { type: 'string' }, 'group-id': { type: 'string' } },
    async ({ client, print, positionals, values: v }) => {
      const body = defined({
        id: oneId(positionals)!,
        root_path: absolute(str(v, 'root-path')),
        user_id: ownerId(v, 'user-id', true),
        group_id: ownerId(v, 'group-id', true),
      });
      if (Object.keys(body).length === 1) throw new UsageError('give --root-path, --user-id or --group-id');
      const g = await client.updateGateway(body);
      print(`updated gateway ${g.id}\n${details(g)}`, g);
    },
    true,
  ),
  unregister: clientCommand(
    'gateway unregister',
    'usage: ferry gateway unregister ID',
    {},
    async ({ client, print, positionals }) => {
      const g = await client.unregisterGateway(oneId(positionals)!);
      print(`unregistered gateway ${g.id}; files it wrote stay in ${g.root_path}`, g);
    },
    true,
  ),
};

export const gateway: Command = commandGroup('gateway', HELP, actions);
