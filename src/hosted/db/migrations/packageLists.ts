// Migrations 16-17: the Package list indexes and kept Package counts per Team
// and state, and the name filter's trigram index.
import { postgresTypes, type Migration } from './ddl.js';

/** Migration 16's indexes and count table, the same on both databases (only its triggers differ). */
const PACKAGE_LISTS = `
CREATE INDEX packages_team_created ON packages(team_id, created_at, id, state);
CREATE INDEX packages_portal_created ON packages(portal_id, team_id, created_at, id, state);
CREATE INDEX packages_teamspace_created ON packages(teamspace_id, team_id, created_at, id, state);
CREATE INDEX packages_team_lname ON packages(team_id, lower(name), name, id, state);
CREATE INDEX packages_team_lsender ON packages(team_id, lower(sender), sender, id, state);
CREATE INDEX packages_team_size ON packages(team_id, size, id, state);
CREATE TABLE package_counts (
  team_id TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  state TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (team_id, state)
);
INSERT INTO package_counts (team_id, state, n) SELECT team_id, state, count(*) FROM packages GROUP BY team_id, state;
`;

export const packageListMigrations: Migration[] = [
  {
    version: 16,
    name: 'Package list indexes, Package counts per Team and state',
    // Each list's page walked in an index, in the order asked, and stopped at the
    // page, instead of every matching Package sorted for each request: the default
    // order (created_at, id) of the Team, Portal and Teamspace lists, and the Team
    // list by name, sender (both case-insensitive, as applySort orders them) and
    // size. The Portal and Teamspace indexes lead with both equalities, so the planner
    // picks them over the Team's; the filtered columns trail, so rows that do not match
    // are passed over in the index; a name filter's count reads lower(name) from
    // packages_team_lname.
    // package_counts answers the unfiltered Team list's metadata.total without
    // counting (services/packageCounts.ts); triggers keep it, so no write path can
    // forget it. docs/benchmarks.md, bench:hosted.
    sql: `${PACKAGE_LISTS}
CREATE TRIGGER packages_count_insert AFTER INSERT ON packages BEGIN
  INSERT INTO package_counts (team_id, state, n) VALUES (NEW.team_id, NEW.state, 1)
    ON CONFLICT (team_id, state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER packages_count_delete AFTER DELETE ON packages BEGIN
  UPDATE package_counts SET n = n - 1 WHERE team_id = OLD.team_id AND state = OLD.state;
END;
CREATE TRIGGER packages_count_update AFTER UPDATE OF team_id, state ON packages
  WHEN OLD.team_id <> NEW.team_id OR OLD.state <> NEW.state BEGIN
  UPDATE package_counts SET n = n - 1 WHERE team_id = OLD.team_id AND state = OLD.state;
  INSERT INTO package_counts (team_id, state, n) VALUES (NEW.team_id, NEW.state, 1)
    ON CONFLICT (team_id, state) DO UPDATE SET n = n + 1;
END;
`,
    postgres: `${postgresTypes(PACKAGE_LISTS)}
CREATE FUNCTION packages_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.team_id = NEW.team_id AND OLD.state = NEW.state THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE package_counts SET n = n - 1 WHERE team_id = OLD.team_id AND state = OLD.state;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    INSERT INTO package_counts (team_id, state, n) VALUES (NEW.team_id, NEW.state, 1)
      ON CONFLICT (team_id, state) DO UPDATE SET n = package_counts.n + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER packages_count AFTER INSERT OR DELETE OR UPDATE OF team_id, state ON packages
  FOR EACH ROW EXECUTE FUNCTION packages_count();
`,
  },
  {
    version: 17,
    name: 'trigram index of package names (the name filter)',
    // SQLite: an FTS5 table over packages' names (external content: it keeps only the
    // index), kept by triggers; services/nameSearch.ts decides when a query uses it.
    sql: `
CREATE VIRTUAL TABLE package_names USING fts5(name, content='packages', content_rowid='rowid', tokenize='trigram');
INSERT INTO package_names(package_names) VALUES ('rebuild');
CREATE TRIGGER package_names_insert AFTER INSERT ON packages BEGIN
  INSERT INTO package_names(rowid, name) VALUES (NEW.rowid, NEW.name);
END;
CREATE TRIGGER package_names_delete AFTER DELETE ON packages BEGIN
  INSERT INTO package_names(package_names, rowid, name) VALUES ('delete', OLD.rowid, OLD.name);
END;
CREATE TRIGGER package_names_update AFTER UPDATE OF name ON packages BEGIN
  INSERT INTO package_names(package_names, rowid, name) VALUES ('delete', OLD.rowid, OLD.name);
  INSERT INTO package_names(rowid, name) VALUES (NEW.rowid, NEW.name);
END;
`,
    // PostgreSQL: pg_trgm's GIN index serves lower(name) LIKE '%...%' itself, chosen by the planner.
    postgres: `
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX packages_lname_trigram ON packages USING gin (lower(name) gin_trgm_ops);
`,
  },
];
