// Cloud connection providers and the authorization object each takes: one
// schema per variant of the spec's table, and per provider the variants it
// accepts. The service checks an authorization against its provider's variants
// with these schemas; a form (the CLI, the app) can build its fields from them.
import { Type, type Static, type TSchema } from 'typebox';

const Str = (max: number, min = 1) => Type.String({ minLength: min, maxLength: max, pattern: '^[^\\u0000]*$' });
/** One line, no surrounding spaces (ids, names, keys). */
const Token = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[^\\s\\u0000](?:[^\\u0000\\r\\n]*[^\\s\\u0000])?$' });
const Pem = Type.String({ minLength: 40, maxLength: 16_384, pattern: '-----BEGIN [A-Z ]*PRIVATE KEY-----' });

export const STORAGE_CLASSES = ['STANDARD', 'INTELLIGENT_TIERING', 'STANDARD_IA', 'ONEZONE_IA', 'GLACIER_IR', 'GLACIER', 'DEEP_ARCHIVE'] as const;
export type StorageClass = (typeof STORAGE_CLASSES)[number];
const StorageClassSchema = Type.Union(STORAGE_CLASSES.map((c) => Type.Literal(c)));

/** An S3 region name, or "default" where the provider has none. */
const Region = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' });
/** S3 bucket names, loosely (S3-compatible stores are laxer than AWS). */
const Bucket = Type.String({ minLength: 3, maxLength: 255, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]$' });

/** Each variant of the spec's table of authorization objects. Unknown keys are dropped. */
export const AUTHORIZATION_VARIANTS = {
  /** S3-compatible, key based. */
  s3_compatible_key: Type.Object({
    client_id: Token(256),
    client_secret: Str(4096),
    destination: Bucket,
    /** http(s)://host[:port][/path] of the store's S3 API. */
    endpoint: Type.String({ minLength: 8, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' }),
    region: Region,
    /** "true" or "false"; "true" when omitted. */
    force_s3_path_style: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  }),
  /** Cloud S3, key based. */
  aws_s3_key: Type.Object({
    client_id: Token(256),
    client_secret: Str(4096),
    destination: Bucket,
    region: Region,
    storage_class: StorageClassSchema,
  }),
  /** Cloud S3, role based: the service assumes the role; no key to rotate. */
  aws_s3_role: Type.Object({
    role_arn: Type.String({ maxLength: 2048, pattern: '^arn:aws[A-Za-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$' }),
    external_id: Type.String({ minLength: 2, maxLength: 1224, pattern: '^[A-Za-z0-9+=,.@:/_-]+$' }),
    destination: Bucket,
    region: Region,
    storage_class: StorageClassSchema,
  }),
  /** Blob container: a SAS URL of the storage account's blob service, and the container. */
  blob_container: Type.Object({
    blob_service_sas_url: Type.String({ maxLength: 4096, pattern: '^https://[^\\s?]+\\?[^\\s]*sig=[^\\s]+$' }),
    destination: Type.String({ minLength: 3, maxLength: 63, pattern: '^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9]))+$' }),
  }),
  /** Bucket with key id (an application key). */
  bucket_key_id: Type.Object({
    client_id: Token(256),
    client_secret: Str(4096),
    destination: Type.String({ minLength: 6, maxLength: 63, pattern: '^[A-Za-z0-9-]+$' }),
  }),
  /** Enterprise key pair (JWT app). */
  enterprise_key_pair: Type.Object({
    client_id: Token(256),
    client_secret: Str(4096),
    public_key_id: Token(256),
    private_key: Pem,
    passphrase: Type.String({ maxLength: 1024 }),
    enterprise_id: Token(256),
  }),
  /** Service account. */
  service_account: Type.Object({
    client_email: Type.String({ format: 'email', maxLength: 320 }),
    private_key: Pem,
    destination: Bucket,
  }),
  /** Media asset manager. */
  media_asset_manager: Type.Object({
    application_id: Token(256),
    application_token: Str(4096),
    storage_id: Token(256),
  }),
  /** Review platform, server-to-server auth. */
  review_server: Type.Object({
    auth_strategy: Type.Literal('server'),
    client_id: Token(256),
    client_secret: Str(4096),
    account_id: Token(256),
    workspace_id: Token(256),
    project_id: Token(256),
  }),
  /** Review platform, legacy developer token. */
  review_legacy: Type.Object({
    developer_token: Str(4096),
    account_id: Token(256),
    team_id: Token(256),
    project_id: Token(256),
  }),
  /** Collaboration tool: the team key. */
  collaboration: Type.Object({ team_id: Token(256) }),
  /** A storage gateway: nothing to authorize here (the agent registers with the connection's id and secret). */
  storage_gateway: Type.Object({}),
} satisfies Record<string, TSchema>;

export type AuthorizationVariant = keyof typeof AUTHORIZATION_VARIANTS;

/** The fields of every variant that are secrets: stored sealed, and answered masked. */
export const SECRET_FIELDS = ['client_secret', 'private_key', 'passphrase', 'blob_service_sas_url', 'application_token', 'developer_token'] as const;

/** What an answer shows instead of a secret; sending it back keeps the secret. */
export const SECRET_MASK = '********';

export interface ProviderInfo {
  /** Spelled-out product name, for messages and forms. */
  label: string;
  variants: AuthorizationVariant[];
  /** Supports the cloud_to_svc direction (the spec: only two S3-compatible providers do). */
  cloudToSvc: boolean;
  /** A region the provider requires ("default" when it has none); free-form when absent. */
  fixedRegion?: string;
}

/**
 * The providers. generic_s3 and storage_gateway are the spec's; the vendor names
 * are this implementation's (the spec omits them): a name ending in _s3 is an
 * S3-compatible store, one ending in _sg connects through a storage gateway.
 */
export const PROVIDERS = {
  generic_s3: { label: 'S3-compatible storage', variants: ['s3_compatible_key'], cloudToSvc: true },
  wasabi_s3: { label: 'Wasabi', variants: ['s3_compatible_key'], cloudToSvc: true },
  digitalocean_s3: { label: 'DigitalOcean Spaces', variants: ['s3_compatible_key'], cloudToSvc: false },
  cloudflare_r2_s3: { label: 'Cloudflare R2', variants: ['s3_compatible_key'], cloudToSvc: false, fixedRegion: 'default' },
  backblaze_s3: { label: 'Backblaze B2 (S3 API)', variants: ['s3_compatible_key'], cloudToSvc: false },
  amazon_s3: { label: 'Amazon S3', variants: ['aws_s3_key', 'aws_s3_role'], cloudToSvc: false },
  azure_blob: { label: 'Azure Blob Storage', variants: ['blob_container'], cloudToSvc: false },
  backblaze_b2: { label: 'Backblaze B2', variants: ['bucket_key_id'], cloudToSvc: false },
  box: { label: 'Box', variants: ['enterprise_key_pair'], cloudToSvc: false },
  google_cloud_storage: { label: 'Google Cloud Storage', variants: ['service_account'], cloudToSvc: false },
  iconik: { label: 'iconik', variants: ['media_asset_manager'], cloudToSvc: false },
  frameio: { label: 'Frame.io', variants: ['review_server', 'review_legacy'], cloudToSvc: false },
  slack: { label: 'Slack', variants: ['collaboration'], cloudToSvc: false },
  storage_gateway: { label: 'Storage gateway', variants: ['storage_gateway'], cloudToSvc: true },
} satisfies Record<string, ProviderInfo>;

export type Provider = keyof typeof PROVIDERS;
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as Provider[];
export const ProviderSchema = Type.Union(PROVIDER_NAMES.map((p) => Type.Literal(p)));

export type S3CompatibleKey = Static<(typeof AUTHORIZATION_VARIANTS)['s3_compatible_key']>;
export type AwsS3Key = Static<(typeof AUTHORIZATION_VARIANTS)['aws_s3_key']>;
export type AwsS3Role = Static<(typeof AUTHORIZATION_VARIANTS)['aws_s3_role']>;
