// `ferry disks ...`: the agent's disk settings from the command line: the disks
// with their settings and what each holds now, and a change of one disk's
// priority or limits (docs/agent-api-notes/disks.md).
import type { Command } from '../command.js';
import type { Disk, DiskChange, DiskList, DiskPriority, DiskStatus, DiskStatusList } from '../../api/agent/disks.js';
import { clientCommand, defined, int, str, table, UsageError } from './common.js';
import type { AgentClient } from '../agentClient.js';

const HELP = `usage: ferry disks [ls|status|set] [options]

The disks the agent reads files from and writes files to, by device, with their
mount points. Each has a priority (mixed, writes first, reads first) and limits
of reads and writes at once (0: no limit).

actions:
  ls (the default)        every disk: its settings, what it holds now, what it is used for
  status                  each disk in use: readers and writers now and waiting, and counts
  set DISK [--priority mixed|writes|reads] [--readers N] [--writers N]
                          change one disk (DISK: its id or its mount point)

Run "ferry disks <action> --help" for its agent options (--agent, --api-key, --json).`;

const PRIORITY: Record<string, DiskPriority> = {
  mixed: 'mixed_read_writes',
  writes: 'prioritize_writes',
  reads: 'prioritize_reads',
  mixed_read_writes: 'mixed_read_writes',
  prioritize_writes: 'prioritize_writes',
  prioritize_reads: 'prioritize_reads',
};
const SHORT: Record<DiskPriority, string> = { mixed_read_writes: 'mixed', prioritize_writes: 'writes first', prioritize_reads: 'reads first' };

const limit = (n: number) => (n === 0 ? 'no limit' : String(n));
const now = (s: DiskStatus | undefined) => (s ? `${s.readers}r ${s.writers}w${s.waiting_readers + s.waiting_writers ? `, ${s.waiting_readers}r ${s.waiting_writers}w waiting` : ''}` : '-');

async function both(client: AgentClient): Promise<{ disks: Disk[]; status: Map<string, DiskStatus> }> {
  const [list, status] = await Promise.all([client.request<DiskList>('GET', '/settings/disks'), client.request<DiskStatusList>('GET', '/settings/disk_status')]);
  return { disks: list.disks, status: new Map(status.disks.map((s) => [s.disk_id, s])) };
}

function listing(disks: Disk[], status: Map<string, DiskStatus>): string {
  if (disks.length === 0) return 'no disks in use';
  return table(
    ['DISK ID', 'PRIORITY', 'READERS', 'WRITERS', 'NOW', 'USED FOR', 'MOUNT POINT'],
    disks.map((d) => [
      d.disk_id,
      SHORT[d.priority],
      limit(d.max_concurrent_readers),
      limit(d.max_concurrent_writers),
      now(status.get(d.disk_id)),
      d.used_for.join(',') || '-',
      `${d.mount_point}${d.device ? ` (${d.device}${d.fs_type ? `, ${d.fs_type}` : ''})` : ''}${d.present ? '' : ' [not mounted]'}`,
    ]),
  );
}

const ls = clientCommand('disks ls', 'usage: ferry disks [ls]', {}, async ({ client, print }) => {
  const { disks, status } = await both(client);
  print(listing(disks, status), { disks, status: [...status.values()] });
});

const status = clientCommand('disks status', 'usage: ferry disks status', {}, async ({ client, print }) => {
  const s = await client.request<DiskStatusList>('GET', '/settings/disk_status');
  const text =
    s.disks.length === 0
      ? 'no disks in use'
      : table(
          ['DISK ID', 'READING', 'WRITING', 'WAITING R/W', 'READS', 'WRITES', 'HELD R/W', 'MOUNT POINT'],
          s.disks.map((d) => [d.disk_id, String(d.readers), String(d.writers), `${d.waiting_readers}/${d.waiting_writers}`, String(d.reads), String(d.writes), `${d.reads_held_for_writes}/${d.writes_held_for_reads}`, d.mount_point]),
        );
  print(text, s);
});

const set = clientCommand(
  'disks set',
  'usage: ferry disks set DISK [--priority mixed|writes|reads] [--readers N] [--writers N]   (DISK: an id or a mount point; 0: no limit)',
  { priority: { type: 'string' }, readers: { type: 'string' }, writers: { type: 'string' } },
  async ({ client, print, positionals, values: v }) => {
    if (positionals.length !== 1) throw new UsageError('name one disk: its id or its mount point (ferry disks lists them)');
    const p = str(v, 'priority');
    if (p !== undefined && !PRIORITY[p]) throw new UsageError(`--priority must be mixed, writes or reads, got "${p}"`);
    const change: DiskChange = defined({ priority: p === undefined ? undefined : PRIORITY[p], max_concurrent_readers: int(v, 'readers', 0, 256), max_concurrent_writers: int(v, 'writers', 0, 256) });
    if (Object.keys(change).length === 0) throw new UsageError('give --priority, --readers or --writers');
    const { disks } = await client.request<DiskList>('GET', '/settings/disks');
    const named = positionals[0]!;
    const disk = disks.find((d) => d.disk_id === named) ?? disks.find((d) => d.mount_point === named);
    if (!disk) throw new UsageError(`no disk "${named}": ferry disks lists them by id and mount point`);
    const d = await client.request<Disk>('PUT', `/settings/disks/${encodeURIComponent(disk.disk_id)}`, { body: change });
    print(`disk ${d.disk_id} (${d.mount_point}): ${SHORT[d.priority]}, readers ${limit(d.max_concurrent_readers)}, writers ${limit(d.max_concurrent_writers)}`, d);
  },
  true,
);

const actions: Record<string, Command> = { ls, status, set };

/** `ferry disks` alone (or with options only) lists the disks. */
export const disks: Command = {
  async run(args) {
    const [first, ...rest] = args;
    if (first === 'help' || first === '-h' || first === '--help') {
      console.log(HELP);
      return 0;
    }
    if (first !== undefined && actions[first]) return actions[first].run(rest);
    if (first !== undefined && !first.startsWith('-')) {
      console.error(`ferry disks: unknown action "${first}"\n\n${HELP}`);
      return 2;
    }
    return ls.run(args);
  },
};
