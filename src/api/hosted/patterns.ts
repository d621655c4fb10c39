// Patterns a tenant writes (a Portal's package_name_format, filter values) run
// on RE2 (re2js) wherever they run: in the service, the agent and the Portal
// page. RE2 takes time linear in the input whatever the pattern, so a name sent
// by an anonymous visitor cannot freeze the service with a pattern that would
// backtrack catastrophically in JavaScript's engine (`^(a+)+$`). One engine
// also means one answer: the page and the agent refuse exactly what the
// service refuses.
import { RE2JS } from 're2js';

const compiled = new Map<string, RE2JS>();

/** The compiled pattern, from a bounded cache; throws what RE2 refuses. */
export function compilePattern(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/**
 * Why `pattern` cannot be used; undefined when it can. RE2 refuses what it
 * cannot run in linear time (backreferences, lookaround) and patterns whose
 * program would explode (repeat counts over 1000, nested ones included).
 */
export function patternProblem(pattern: string): string | undefined {
  try {
    compilePattern(pattern);
    return undefined;
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).replace(/^error parsing regexp: /, '');
  }
}

/** Whether `pattern` is found in `subject` (unanchored, as RegExp.test); false for a pattern RE2 refuses. */
export function patternFound(pattern: string, subject: string): boolean {
  if (patternProblem(pattern) !== undefined) return false;
  return compilePattern(pattern).test(subject);
}
