// Accounts: users, Teams, their memberships and roles, API keys.
import type { Generated } from 'kysely';

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  /** Raised to revoke every user token signed before (services/sessions.ts). */
  token_generation: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface TeamsTable {
  id: string;
  name: string;
  subdomain: string;
  max_email_recipients: number;
  custom_expiry_enabled: number;
  custom_expiry_default: number;
  download_limit_enabled: number;
  download_limit_default: number;
  created_at: string;
  updated_at: string;
}

export type Role = 'owner' | 'admin' | 'member';

export interface MembershipsTable {
  id: string;
  team_id: string;
  user_id: string;
  policy_key: Role;
  approved: number;
  invitation_accepted: string | null;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  team_id: string;
  user_id: string;
  name: string;
  description: string;
  key_hash: string;
  key_prefix: string;
  key_last4: string;
  expiry: string | null;
  state: 'active' | 'inactive';
  last_request_at: string | null;
  created_at: string;
  updated_at: string;
}
