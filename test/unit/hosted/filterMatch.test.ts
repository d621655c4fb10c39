// filterMatches(), the pure function cloud deliveries use to narrow a Package's
// files: each criterion, include and exclude, any value of a rule, AND across
// rules, and patterns that would backtrack catastrophically in JavaScript's
// engine matched in linear time.
import { describe, expect, it } from 'vitest';
import type { FilterRule } from '../../../src/api/hosted/filters.js';
import { filterMatches, subjectOf } from '../../../src/hosted/services/filterMatch.js';
import { patternProblem } from '../../../src/api/hosted/patterns.js';

const rule = (criterion: FilterRule['criterion'], action: FilterRule['action'], ...values: string[]): FilterRule => ({ criterion, action, operator: 'regex_match', values });
const file = (path: string, name: string) => ({ path, name });

describe('file_name', () => {
  it('include: the name must contain a match of some value (a search: anchor with ^ and $)', () => {
    const f = { rules: [rule('file_name', 'include', '\\.mov$', '\\.mp4$')] };
    expect(filterMatches(f, file('', 'take1.mov'))).toBe(true);
    expect(filterMatches(f, file('deep/down', 'take1.mp4'))).toBe(true);
    expect(filterMatches(f, file('', 'take1.mov.txt'))).toBe(false);
    expect(filterMatches(f, file('x.mov', 'notes.txt'))).toBe(false); // the folder is not part of the name
    expect(filterMatches({ rules: [rule('file_name', 'include', 'take')] }, file('', 'retake.wav'))).toBe(true);
  });

  it('exclude: the name must match none of the values', () => {
    const f = { rules: [rule('file_name', 'exclude', '^\\.', '\\.tmp$')] };
    expect(filterMatches(f, file('', 'clip.mov'))).toBe(true);
    expect(filterMatches(f, file('', '.DS_Store'))).toBe(false);
    expect(filterMatches(f, file('', 'render.tmp'))).toBe(false);
  });

  it('is case-sensitive unless the pattern says (?i)', () => {
    expect(filterMatches({ rules: [rule('file_name', 'include', '\\.mov$')] }, file('', 'A.MOV'))).toBe(false);
    expect(filterMatches({ rules: [rule('file_name', 'include', '(?i)\\.mov$')] }, file('', 'A.MOV'))).toBe(true);
  });

  it('matches names in any script', () => {
    expect(filterMatches({ rules: [rule('file_name', 'include', '^\\p{Greek}+\\.txt$')] }, file('', 'αβγ.txt'))).toBe(true);
    expect(filterMatches({ rules: [rule('file_name', 'include', '^.\\.txt$')] }, file('', '😀.txt'))).toBe(true);
  });
});

describe('file_path', () => {
  it('is the path in the Package with the name, "folder/sub/name"; the name alone at the top', () => {
    expect(subjectOf('file_path', file('day1/cam-a', 'c.mov'))).toBe('day1/cam-a/c.mov');
    expect(subjectOf('file_path', file('', 'c.mov'))).toBe('c.mov');
    const f = { rules: [rule('file_path', 'exclude', '(^|/)proxies/')] };
    expect(filterMatches(f, file('day1/proxies', 'c.mov'))).toBe(false);
    expect(filterMatches(f, file('proxies', 'c.mov'))).toBe(false);
    expect(filterMatches(f, file('day1/cam-a', 'proxies.mov'))).toBe(true);
    expect(filterMatches({ rules: [rule('file_path', 'include', '^day1/')] }, file('day1', 'x'))).toBe(true);
    expect(filterMatches({ rules: [rule('file_path', 'include', '^day1/')] }, file('day10', 'x'))).toBe(false);
  });
});

describe('rules combine with AND', () => {
  const f = { rules: [rule('file_name', 'include', '\\.mov$'), rule('file_path', 'exclude', '(^|/)proxies/')] };
  it.each([
    ['day1', 'a.mov', true],
    ['day1/proxies', 'a.mov', false], // first rule holds, second does not
    ['day1', 'a.wav', false], // second holds, first does not
    ['proxies', 'a.wav', false], // neither
  ])('%s/%s -> %s', (path, name, expected) => {
    expect(filterMatches(f, file(path, name))).toBe(expected);
  });
});

describe('patterns', () => {
  it('patternProblem names what RE2 refuses: bad syntax, backreferences, lookaround, exploding repeat counts', () => {
    expect(patternProblem('\\.mov$')).toBeUndefined();
    expect(patternProblem('[')).toMatch(/missing closing \]/);
    expect(patternProblem('(a)\\1')).toMatch(/invalid escape/);
    expect(patternProblem('x(?=y)')).toMatch(/Perl syntax/);
    expect(patternProblem('((a{100}){100}){100}')).toMatch(/invalid repeat count/);
  });

  it('patterns that backtrack catastrophically in JavaScript answer at once against a long adversarial name', () => {
    // Each of these takes seconds to years with RegExp on inputs like these; RE2 is linear.
    const long = 'a'.repeat(4000) + '!';
    expect(filterMatches({ rules: [rule('file_name', 'include', '^(a+)+$')] }, file('', long))).toBe(false);
    expect(filterMatches({ rules: [rule('file_name', 'include', '^(a|aa)*$')] }, file('', long))).toBe(false);
    expect(filterMatches({ rules: [rule('file_path', 'include', '.*.*.*.*x')] }, file('a'.repeat(4000), 'b'))).toBe(false);
    expect(filterMatches({ rules: [rule('file_name', 'include', '^(a+)+!$')] }, file('', long))).toBe(true);
  });
});
