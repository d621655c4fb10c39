// Migrations 9-10: Teamspaces and their members; custom metadata forms, form
// responses and Portal terms of service.
import { type Migration } from './ddl.js';

export const teamspacesFormsMigrations: Migration[] = [
  {
    version: 9,
    name: 'teamspaces, their members, the Portal teamspace',
    // teamspace_members points at the Team membership, so leaving the Team leaves its Teamspaces.
    // Packages keep their teamspace_id when a Teamspace is deleted (no foreign key): they then
    // stay hidden from members (see docs/hosted-api-notes/teamspaces.md).
    sql: `
CREATE TABLE teamspaces (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX teamspaces_team ON teamspaces(team_id, name);
CREATE TABLE teamspace_members (
  id TEXT PRIMARY KEY,
  teamspace_id TEXT NOT NULL REFERENCES teamspaces(id) ON DELETE CASCADE,
  membership_id TEXT NOT NULL REFERENCES memberships(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  UNIQUE (teamspace_id, membership_id)
);
CREATE INDEX teamspace_members_membership ON teamspace_members(membership_id);
ALTER TABLE portals ADD COLUMN teamspace_id TEXT REFERENCES teamspaces(id);
ALTER TABLE packages ADD COLUMN private_access INTEGER NOT NULL DEFAULT 0;
CREATE INDEX packages_teamspace ON packages(teamspace_id, state);
`,
  },
  {
    version: 10,
    name: 'custom metadata forms, form responses, Portal terms of service',
    // A form (portal_id set) or a Team's template (portal_id null); fields as JSON,
    // always read and written whole. A response keeps the form as it was answered,
    // so later edits do not change what is delivered; package_id is set once.
    sql: `
CREATE TABLE metadata_forms (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  portal_id TEXT REFERENCES portals(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  delivery_formats TEXT NOT NULL,
  form_template_id TEXT,
  disabled INTEGER NOT NULL DEFAULT 0,
  fields TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX metadata_forms_portal ON metadata_forms(portal_id) WHERE portal_id IS NOT NULL;
CREATE INDEX metadata_forms_team ON metadata_forms(team_id, created_at);
CREATE TABLE form_responses (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  portal_id TEXT NOT NULL,
  form_id TEXT NOT NULL,
  package_id TEXT UNIQUE,
  form TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX form_responses_form ON form_responses(form_id, package_id);
ALTER TABLE portals ADD COLUMN terms_of_service_enabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE portals ADD COLUMN terms_of_service TEXT;
ALTER TABLE packages ADD COLUMN terms_accepted_at TEXT;
`,
  },
];
