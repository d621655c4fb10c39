// Tests that cannot run here say why: the reason travels in the test's meta to
// the JSON report, and `npm test` lists every skipped test with it.
import type { TestContext, TestOptions } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    skip_reason?: string;
  }
}

/** Options for a test or suite that runs only when `condition` holds; otherwise it is skipped for `reason`. */
export function onlyIf(condition: unknown, reason: string): TestOptions {
  return condition ? {} : { skip: true, meta: { skip_reason: reason } };
}

/** Skips the running test for `reason` (a condition known only once it runs). */
export function skipBecause(ctx: TestContext, reason: string): never {
  ctx.task.meta.skip_reason = reason;
  ctx.skip(reason);
  throw new Error('unreachable');
}

export const POSTGRES_ONLY = 'PostgreSQL only: runs in the PostgreSQL pass';
