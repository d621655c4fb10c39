// Disk settings (spec: Disk configuration): the disks the agent reads and
// writes, found from the files its engine touches and from the paths its
// records name (the config dir, uploads, downloads' destinations, watch folders,
// the storage gateways' folders); each one's priority and slot limits, kept in
// agent.db and applied at once; and what each disk's gate holds now.
import path from 'node:path';
import type { AgentContext } from '../context.js';
import type { Disk, DiskChange, DiskList, DiskStatusList, DiskUse } from '../../api/agent/disks.js';
import type { DiskEntry } from '../engine/disks.js';
import { pathsInUse } from '../store/diskStore.js';
import { invalid, notFound } from '../errors.js';

export interface DisksService {
  list(): Promise<DiskList>;
  get(id: string): Promise<Disk>;
  update(id: string, change: DiskChange): Promise<Disk>;
  status(): Promise<DiskStatusList>;
}

export function createDisksService(ctx: AgentContext): DisksService {
  const { disks } = ctx;

  /**
   * Every disk the agent uses, each with what for: looked up again on each call (a
   * folder may have moved to another disk), each path's stat off the event loop, all at once.
   */
  async function uses(): Promise<Map<DiskEntry, Set<DiskUse>>> {
    const paths = pathsInUse(ctx.db);
    const wanted: [string, DiskUse][] = [
      [ctx.config.configDir, 'configuration'],
      ...paths.uploads.map((p): [string, DiskUse] => [path.dirname(p), 'uploads']),
      ...(['downloads', 'watch_folders', 'storage_gateways'] as const).flatMap((use) => paths[use].map((p): [string, DiskUse] => [p, use])),
    ];
    const found = new Map<DiskEntry, Set<DiskUse>>();
    const entries = await Promise.all(wanted.map(([p]) => disks.ofPath(p)));
    entries.forEach((e, i) => {
      if (e) (found.get(e) ?? found.set(e, new Set()).get(e)!).add(wanted[i]![1]);
    });
    return found;
  }

  const ORDER: DiskUse[] = ['configuration', 'uploads', 'downloads', 'watch_folders', 'storage_gateways'];
  const view = (e: DiskEntry, used: Set<DiskUse> | undefined): Disk => ({
    disk_id: e.id,
    ...e.gate.settings,
    mount_point: e.mountPoint,
    device: e.device,
    fs_type: e.fsType,
    present: e.dev !== undefined,
    used_for: ORDER.filter((u) => used?.has(u)),
  });

  async function entry(id: string): Promise<{ e: DiskEntry; used: Map<DiskEntry, Set<DiskUse>> }> {
    const used = await uses();
    const e = disks.get(id);
    if (!e) throw notFound(`disk ${id}`);
    return { e, used };
  }

  return {
    async list() {
      const used = await uses();
      return { disks: disks.all().map((e) => view(e, used.get(e))) };
    },
    async get(id) {
      const { e, used } = await entry(id);
      return view(e, used.get(e));
    },
    async update(id, change) {
      if (change.disk_id !== undefined && change.disk_id !== id) throw invalid(`disk_id "${change.disk_id}" in the body is not the disk of the path (${id})`, 'disk_id');
      const { disk_id: _same, ...limits } = change;
      // Unknown fields are dropped by the validator: a body of only those changes nothing.
      if (Object.keys(limits).length === 0) throw invalid('nothing to change: give priority, max_concurrent_readers or max_concurrent_writers');
      const { e, used } = await entry(id);
      disks.configure(e, { ...e.gate.settings, ...limits });
      ctx.log.info({ disk: e.id, mount_point: e.mountPoint, ...e.gate.settings }, 'disk settings changed');
      return view(e, used.get(e));
    },
    async status() {
      await uses();
      return { disks: disks.all().filter((e) => e.dev !== undefined).map((e) => ({ disk_id: e.id, mount_point: e.mountPoint, ...e.gate.counts() })) };
    },
  };
}
