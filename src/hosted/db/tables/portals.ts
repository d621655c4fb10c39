// Portals, their custom metadata forms and the answers to them, and Teamspaces.

export interface PortalsTable {
  id: string;
  team_id: string;
  name: string;
  /** A DNS label, stored lower-cased; unique across the service. */
  subdomain: string;
  message: string;
  /** scrypt hash; null when the Portal has no access code. */
  access_code_hash: string | null;
  has_access_code: number;
  active: number;
  recipients: string; // JSON array of e-mails
  download_password_hash: string | null;
  has_download_password: number;
  /** 0: the Team's default; -1: kept until deleted (unlimited storage); else days after finalize. */
  custom_expiry_days: number;
  access_level: 'regular' | 'private';
  package_size_restriction_enabled: number;
  max_package_size: number | null;
  max_file_size: number | null;
  max_file_count: number | null;
  file_type_restriction_enabled: number;
  file_types: string; // JSON array of lower-cased extensions with a leading dot
  expiry_enabled: number;
  expiry: string | null;
  /** A regex package names must match; '' for none. */
  package_name_format: string;
  user_authentication_required: number;
  tag_id: string | null;
  created_at: string;
  updated_at: string;
  /** The Teamspace its Packages join; null for none. */
  teamspace_id: string | null;
  terms_of_service_enabled?: number;
  /** JSON {title, text}; null when never set. */
  terms_of_service?: string | null;
}

export interface TeamspacesTable {
  id: string;
  team_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

/** A Team membership added to a Teamspace; `id` is the teamspace_membership_id of the API. */
export interface TeamspaceMembersTable {
  id: string;
  teamspace_id: string;
  membership_id: string;
  created_at: string;
}

/** A Portal's custom metadata form (portal_id set) or a Team's form template (portal_id null). */
export interface MetadataFormsTable {
  id: string;
  team_id: string;
  portal_id: string | null;
  name: string;
  delivery_formats: string; // JSON array
  form_template_id: string | null;
  disabled: number;
  fields: string; // JSON array of FormField, as stored (complete)
  created_at: string;
  updated_at: string;
}

/** One answer to a Portal's form; taken by at most one Package (form_data_id). */
export interface FormResponsesTable {
  id: string;
  team_id: string;
  portal_id: string;
  form_id: string;
  package_id: string | null;
  /** JSON {name, delivery_formats, fields}: the form as it was answered. */
  form: string;
  /** JSON object: field name to its stored value. */
  data: string;
  created_at: string;
}
