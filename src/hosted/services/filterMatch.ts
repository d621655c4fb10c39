// Whether a file passes a filter: every rule must hold (AND); a rule holds when
// any of its patterns is found in the rule's subject (include) or none is
// (exclude). Patterns run on RE2 (src/api/hosted/patterns.ts), so a file name
// chosen by an anonymous uploader cannot stall the service.
import { compilePattern } from '../../api/hosted/patterns.js';
import type { FilterCriterion, FilterRule } from '../../api/hosted/filters.js';

/** A file as a filter sees it: `path` is its folder in the Package ('' at the top). */
export interface FilterFile {
  name: string;
  path: string;
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
  const found = rule.values.some((v) => compilePattern(v).test(subject));
  return rule.action === 'include' ? found : !found;
}

/** The file passes when every rule of the filter holds. */
export function filterMatches(filter: { rules: FilterRule[] }, file: FilterFile): boolean {
  return filter.rules.every((rule) => ruleMatches(rule, file));
}
