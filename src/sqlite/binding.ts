// Which build of better-sqlite3's addon to load. By default the one npm built in
// node_modules, for the Node that installed it. FERRY_SQLITE_BINDING names
// another build of the same addon, for another Node ABI: the test run on Node 24
// (the Node inside Electron 45, scripts/node24.mjs) loads one built for it, while
// node_modules keeps the build the rest of the tests use.
import type Database from 'better-sqlite3';

export const sqliteOptions = (env: NodeJS.ProcessEnv = process.env): Database.Options =>
  env.FERRY_SQLITE_BINDING ? { nativeBinding: env.FERRY_SQLITE_BINDING } : {};
