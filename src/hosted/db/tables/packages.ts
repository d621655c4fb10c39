// Packages: their files, Links and Tags, and the kept counts per Team and state.

export interface TagsTable {
  id: string;
  team_id: string;
  name: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export type PackageState = 'new' | 'finalized' | 'expired' | 'archived';

export interface PackagesTable {
  id: string;
  team_id: string;
  portal_id: string | null;
  teamspace_id: string | null;
  created_by: string | null;
  name: string;
  description: string;
  sender: string;
  recipients: string; // JSON array of e-mails
  state: PackageState;
  size: number;
  total_files: number;
  access_limit: number | null;
  password_hash: string | null;
  contains_virus: number;
  custom_expiry: number;
  custom_metadata_id: string | null;
  expiry: string | null;
  unlimited_storage: number;
  chunk_size: number;
  tag_id: string | null;
  finalized_at: string | null;
  objects_deleted: number;
  created_at: string;
  updated_at: string;
  /** 1 once the private Portal it came through is deleted: it stays private (services/visibility.ts). */
  private_access?: number;
  /** When the uploader accepted the Portal's terms of service; null when it had none. */
  terms_accepted_at?: string | null;
}

export interface FilesTable {
  id: string;
  package_id: string;
  kind: 'file' | 'directory';
  name: string;
  path: string;
  last_modified: string;
  size: number | null;
  chunk_size: number;
  object_key: string | null;
  upload_id: string | null;
  state: 'pending' | 'finalized';
  virus_detected: number;
  /** Malware scan (migration 11): null when no scanner was configured at its finalize. */
  scan_state?: ScanState | null;
  /** The scanner's signature name when infected, or why the scan failed. */
  scan_result?: string | null;
  created_at: string;
  updated_at: string;
}

export type ScanState = 'pending' | 'clean' | 'infected' | 'failed';

export interface LinksTable {
  id: string;
  package_id: string;
  secret_hash: string;
  email: string | null;
  access_limit: number | null;
  access_count: number;
  expiry: string | null;
  password_hash: string | null;
  active: number;
  created_at: string;
}

/** How many Packages a Team has in each state, kept by triggers on packages (migration 16). */
export interface PackageCountsTable {
  team_id: string;
  state: PackageState;
  n: number;
}
