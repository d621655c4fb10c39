// Wire shapes of the agent's disk settings (spec: Disk configuration):
// GET /settings/disks, GET and PUT /settings/disks/{disk_id}, GET
// /settings/disk_status. A disk is a device the agent reads or writes files on;
// its id comes from its mount point, so it stays the same across restarts
// (docs/agent-api-notes/disks.md).
import { Type, type Static } from 'typebox';

// An enum, not a union of literals: a wrong value is answered with every allowed one.
export const DiskPriority = Type.Enum(['mixed_read_writes', 'prioritize_writes', 'prioritize_reads']);
export type DiskPriority = Static<typeof DiskPriority>;

/** 0: no limit. */
const SlotLimit = Type.Integer({ minimum: 0, maximum: 256 });

export const DiskIdParams = Type.Object({ disk_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
export type DiskIdParams = Static<typeof DiskIdParams>;

/** What the agent uses a disk for. */
export const DiskUse = Type.Union([Type.Literal('configuration'), Type.Literal('uploads'), Type.Literal('downloads'), Type.Literal('watch_folders'), Type.Literal('storage_gateways')]);
export type DiskUse = Static<typeof DiskUse>;

export const Disk = Type.Object({
  disk_id: Type.String(),
  priority: DiskPriority,
  /** Reads at once on this disk; 0 for no limit. */
  max_concurrent_readers: Type.Integer(),
  /** Writes at once on this disk; 0 for no limit. */
  max_concurrent_writers: Type.Integer(),
  /** Where the device is mounted (a drive's root on Windows). */
  mount_point: Type.String(),
  /** The device as the system names it (e.g. /dev/nvme0n1p2 on Linux); null where the system does not say. */
  device: Type.Union([Type.String(), Type.Null()]),
  /** The file system's type (ext4, apfs, ntfs...); null where the system does not say. */
  fs_type: Type.Union([Type.String(), Type.Null()]),
  /** False for a disk with saved settings that is not mounted now. */
  present: Type.Boolean(),
  used_for: Type.Array(DiskUse),
});
export type Disk = Static<typeof Disk>;

export const DiskList = Type.Object({ disks: Type.Array(Disk) });
export type DiskList = Static<typeof DiskList>;

/** PUT /settings/disks/{disk_id}: the fields given change, the others keep their values. */
export const DiskChange = Type.Object(
  {
    /** When given, the same as the path's. */
    disk_id: Type.Optional(Type.String({ maxLength: 64 })),
    priority: Type.Optional(DiskPriority),
    max_concurrent_readers: Type.Optional(SlotLimit),
    max_concurrent_writers: Type.Optional(SlotLimit),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type DiskChange = Static<typeof DiskChange>;

export const DiskStatus = Type.Object({
  disk_id: Type.String(),
  mount_point: Type.String(),
  /** Reads and writes under way now, and those waiting for a slot. */
  readers: Type.Integer(),
  writers: Type.Integer(),
  waiting_readers: Type.Integer(),
  waiting_writers: Type.Integer(),
  /** Since the agent started: reads and writes done, and how many of them started beside the other kind (running or waiting). */
  reads: Type.Integer(),
  writes: Type.Integer(),
  reads_beside_writes: Type.Integer(),
  writes_beside_reads: Type.Integer(),
  /** Reads that waited because the disk favours writes and writes ran or waited; writes held back for reads likewise. */
  reads_held_for_writes: Type.Integer(),
  writes_held_for_reads: Type.Integer(),
  /** The most readers and writers at once since the agent started. */
  peak_readers: Type.Integer(),
  peak_writers: Type.Integer(),
});
export type DiskStatus = Static<typeof DiskStatus>;

export const DiskStatusList = Type.Object({ disks: Type.Array(DiskStatus) });
export type DiskStatusList = Static<typeof DiskStatusList>;
