// Wire shapes of the agent's Automations group: the four kinds' create and
// update bodies, the automation record, its Packages, and the routes' params.
// The REST routes validate with these and the CLI client takes its types from them.
import { Type, type Static, type TProperties } from 'typebox';

export const AUTOMATION_TYPES = ['portal_download', 'all_portals_download', 'team_upload', 'portal_upload'] as const;
export type AutomationType = (typeof AUTOMATION_TYPES)[number];

/** What a record shows instead of a secret it keeps (download_password, access_code); sending it back keeps the secret. */
export const SECRET_MASK = '********';

const NoNul = '^[^\\u0000]*$';
const Name = Type.String({ minLength: 1, maxLength: 255, pattern: NoNul });
/** Absolute; that it is absolute (and a folder) is checked by the service (400). */
const LocalPath = Type.String({ minLength: 1, maxLength: 4096, pattern: NoNul });
const Email = Type.String({ format: 'email', maxLength: 254 });
const Priority = Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 });
const Subdomain = Type.String({ minLength: 1, maxLength: 253, pattern: NoNul });
const TeamId = Type.String({ minLength: 1, maxLength: 100 });
/**
 * Minutes of quiet before a watched subfolder is sent. Fractions are taken (0.05 is
 * three seconds), so that tests and impatient users need no other switch.
 */
const Timeout = Type.Number({ exclusiveMinimum: 0, maximum: 10_080 });
/** Globs matched against each entry's path below the watched folder (`/`-separated); a pattern without `/` matches a name at any depth. */
const Blacklist = Type.Array(Type.String({ minLength: 1, maxLength: 1000, pattern: NoNul }), { maxItems: 200 });

const opt = <P extends TProperties>(props: P) =>
  Object.fromEntries(Object.entries(props).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof P]: ReturnType<typeof Type.Optional<P[K]>> };

// ---------------------------------------------------------------- fields of each kind

const PortalDownloadFields = {
  name: Name,
  /** A Portal of one of the signed-in user's Teams. */
  portal_subdomain: Subdomain,
  dst_folder: LocalPath,
  /** Default true: each Package in a folder of its own name. */
  create_package_folder: Type.Boolean(),
  /** Packages finalized at or after it are fetched; default: when the automation is created. */
  effective_time: Type.String({ format: 'date-time' }),
  enabled: Type.Boolean(),
  download_priority: Priority,
};

const AllPortalsDownloadFields = {
  name: Name,
  team_id: TeamId,
  dst_folder: LocalPath,
  /** Default false: each Portal's Packages under a folder named after the Portal. */
  create_portal_subfolder: Type.Boolean(),
  /** An addition (the spec's all-Portals body lacks it): default true, as for portal_download. */
  create_package_folder: Type.Boolean(),
  effective_time: Type.String({ format: 'date-time' }),
  enabled: Type.Boolean(),
  download_priority: Priority,
};

/** What both watch folders take. */
const WatchFields = {
  name: Name,
  enabled: Type.Boolean(),
  path: LocalPath,
  timeout: Timeout,
  blacklist: Blacklist,
  /** Deletes each file once its Package is complete (only if it is still as it was sent). */
  delete_files_after_upload: Type.Boolean(),
  /** Appended to the subfolder's name to make the Package's name. */
  package_name_suffix: Type.String({ maxLength: 100, pattern: NoNul }),
  /** The Package's description. */
  message: Type.String({ maxLength: 10_000, pattern: NoNul }),
  priority: Priority,
  /** Files at the top of `path` are sent too, each as a Package of its own. */
  upload_loose_files: Type.Boolean(),
  /** A file still being written is sent as it grows (full parts as they are written) and finalized once its size has been still for `timeout`. */
  growing_files: Type.Boolean(),
};

const TeamUploadFields = {
  ...WatchFields,
  team_id: TeamId,
  /** Empty: each Package is a link-type upload, and the automation makes one Link of it once it is complete. */
  recipient_emails: Type.Array(Email, { maxItems: 1000 }),
  delete_after: Type.Integer({ minimum: 1, maximum: 36_500 }),
  download_limit: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  download_password: Type.String({ maxLength: 200, pattern: NoNul }),
  tag_id: Type.String({ maxLength: 100 }),
  tag_name: Type.String({ minLength: 1, maxLength: 100, pattern: NoNul }),
  unlimited_storage: Type.Boolean(),
};

const PortalUploadFields = {
  ...WatchFields,
  subdomain: Subdomain,
  sender_email: Email,
  access_code: Type.String({ maxLength: 1024 }),
};

// ---------------------------------------------------------------- bodies

export const CreatePortalDownloadBody = Type.Object({
  ...opt(PortalDownloadFields),
  name: Name,
  portal_subdomain: PortalDownloadFields.portal_subdomain,
  dst_folder: LocalPath,
});
export const CreateAllPortalsDownloadBody = Type.Object({
  ...opt(AllPortalsDownloadFields),
  name: Name,
  team_id: TeamId,
  dst_folder: LocalPath,
});
export const CreateTeamUploadBody = Type.Object({
  ...opt(TeamUploadFields),
  name: Name,
  path: LocalPath,
  team_id: TeamId,
  recipient_emails: TeamUploadFields.recipient_emails,
  timeout: Timeout,
});
export const CreatePortalUploadBody = Type.Object({
  ...opt(PortalUploadFields),
  name: Name,
  path: LocalPath,
  subdomain: Subdomain,
  sender_email: Email,
  timeout: Timeout,
});

/** PUT bodies: the fields to change (at least one); others keep their values. */
export const UpdatePortalDownloadBody = Type.Object(opt(PortalDownloadFields));
export const UpdateAllPortalsDownloadBody = Type.Object(opt(AllPortalsDownloadFields));
export const UpdateTeamUploadBody = Type.Object(opt(TeamUploadFields));
export const UpdatePortalUploadBody = Type.Object(opt(PortalUploadFields));

export const PortalDownloadSettings = Type.Object(opt(PortalDownloadFields));
export type PortalDownloadSettings = Static<typeof PortalDownloadSettings>;
export const AllPortalsDownloadSettings = Type.Object(opt(AllPortalsDownloadFields));
export type AllPortalsDownloadSettings = Static<typeof AllPortalsDownloadSettings>;
export const TeamUploadSettings = Type.Object(opt(TeamUploadFields));
export type TeamUploadSettings = Static<typeof TeamUploadSettings>;
export const PortalUploadSettings = Type.Object(opt(PortalUploadFields));
export type PortalUploadSettings = Static<typeof PortalUploadSettings>;

/** Any kind's fields, as a body carries them (which ones a kind takes is its schema's business). */
export type AutomationFields = Partial<PortalDownloadSettings & AllPortalsDownloadSettings & TeamUploadSettings & PortalUploadSettings>;

export const CREATE_BODIES = {
  portal_download: CreatePortalDownloadBody,
  all_portals_download: CreateAllPortalsDownloadBody,
  team_upload: CreateTeamUploadBody,
  portal_upload: CreatePortalUploadBody,
} as const;

export const UPDATE_BODIES = {
  portal_download: UpdatePortalDownloadBody,
  all_portals_download: UpdateAllPortalsDownloadBody,
  team_upload: UpdateTeamUploadBody,
  portal_upload: UpdatePortalUploadBody,
} as const;

// ---------------------------------------------------------------- records

const Common = {
  automation_id: Type.String(),
  type: Type.Union([Type.Literal('portal_download'), Type.Literal('all_portals_download'), Type.Literal('team_upload'), Type.Literal('portal_upload')]),
  name: Type.String(),
  enabled: Type.Boolean(),
  /** When it last started a Package (sent one, or began fetching one); null before. */
  last_run_at: Type.Union([Type.String(), Type.Null()]),
  /** What last went wrong; null once it works again. */
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
};

/**
 * One record shape for every kind: the common fields plus the kind's own fields
 * (each kind shows all of its fields; secrets as SECRET_MASK when set).
 */
export const AutomationRecord = Type.Object({
  ...Common,
  ...opt(PortalDownloadFields),
  ...opt(AllPortalsDownloadFields),
  ...opt(TeamUploadFields),
  ...opt(PortalUploadFields),
  name: Type.String(),
  enabled: Type.Boolean(),
});
export type AutomationRecord = Static<typeof AutomationRecord>;

export const AutomationList = Type.Array(AutomationRecord);

export const AUTOMATION_PACKAGE_STATES = ['pending', 'transferring', 'complete', 'failed', 'cancelled'] as const;
export type AutomationPackageState = (typeof AUTOMATION_PACKAGE_STATES)[number];

/** A Package an automation sent or fetched (GET /automations/{id}/packages). */
export const AutomationPackage = Type.Object({
  /** The upload's or the download's id (the agent's /uploads or /downloads record). */
  transfer_id: Type.String(),
  direction: Type.Union([Type.Literal('send'), Type.Literal('fetch')]),
  /** Null until the service has made the Package (sends). */
  package_id: Type.Union([Type.String(), Type.Null()]),
  /** The Package's name (fetch), or the subfolder's or loose file's name (send). */
  name: Type.String(),
  /** pending: recorded, the transfer not made yet; cancelled: its transfer was removed. */
  state: Type.Union([Type.Literal('pending'), Type.Literal('transferring'), Type.Literal('complete'), Type.Literal('failed'), Type.Literal('cancelled')]),
  /** Sends: the Portal received it; fetches: the Portal it came from. */
  portal_id: Type.Optional(Type.String()),
  /** Sends: how many files it holds. */
  files: Type.Optional(Type.Integer()),
  /** Sends: the SHA-256 of its entries (path, size, modification time). */
  fingerprint: Type.Optional(Type.String()),
  /** Link-type Team sends: the Link the automation made once the Package was complete. */
  link_url: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type AutomationPackage = Static<typeof AutomationPackage>;
export const AutomationPackageList = Type.Array(AutomationPackage);

export const AutomationParams = Type.Object({ automation_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });
export type AutomationParams = Static<typeof AutomationParams>;
