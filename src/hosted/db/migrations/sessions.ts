// Migration 19: user sessions that can be revoked.
import { type Migration } from './ddl.js';

export const sessionMigrations: Migration[] = [
  {
    version: 19,
    name: 'users: token generation (revoking user tokens)',
    // Every user token carries the generation it was signed under and is refused once the
    // user's moves on: a password change or reset, or "sign out everywhere", adds one
    // (services/sessions.ts). Tokens signed before this migration carry none and count as 0.
    sql: `ALTER TABLE users ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;`,
  },
];
