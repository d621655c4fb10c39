// Whether a file passes a filter: every rule must hold (AND); a rule holds when
// any of its patterns is found in the rule's subject (include) or none is
// (exclude). Patterns run on RE2 (re2js): time linear in the input whatever the
// pattern, so a file name chosen by an anonymous uploader cannot stall the
// service with a pattern that would backtrack catastrophically in JavaScript's
// engine. Pure, apart from a bounded cache of compiled patterns.
import { RE2JS } from 're2js';
import type { FilterCriterion, FilterRule } from '../../api/hosted/filters.js';

/** A file as a filter sees it: `path` is its folder in the Package ('' at the top). */
export interface FilterFile {
  name: string;
  path: string;
}

const compiledCache = new Map<string, RE2JS>();

function compile(pattern: string): RE2JS {
  let re = compiledCache.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    if (compiledCache.size >= 1000) compiledCache.clear();
    compiledCache.set(pattern, re);
  }
  return re;
}

/**
 * Why `pattern` cannot be a filter value; undefined when it can. RE2 refuses
 * what it cannot run in linear time (backreferences, lookaround) and patterns
 * whose program would explode (repeat counts over 1000, nested ones included).
 */
export function patternProblem(pattern: string): string | undefined {
  try {
    compile(pattern);
    return undefined;
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).replace(/^error parsing regexp: /, '');
  }
}

export function subjectOf(criterion: FilterCriterion, file: FilterFile): string {
  switch (criterion) {
    case 'file_name':
      return file.name;
    case 'file_path':
      return file.path ? `${file.path}/${file.name}` : file.name;
  }
}

export function ruleMatches(rule: FilterRule, file: FilterFile): boolean {
  const subject = subjectOf(rule.criterion, file);
  const found = rule.values.some((v) => compile(v).test(subject));
  return rule.action === 'include' ? found : !found;
}

/** The file passes when every rule of the filter holds. */
export function filterMatches(filter: { rules: FilterRule[] }, file: FilterFile): boolean {
  return filter.rules.every((rule) => ruleMatches(rule, file));
}
