// The Portal page's own checks give the service's answers before the first byte:
// the name format on RE2, disguised file names refused.
import { describe, expect, it } from 'vitest';
import { fileProblem, nameProblem } from '../../../web/portal/checks.js';

const item = (name: string, size = 1) => ({ file: { size } as File, path: '', name });

describe('Portal page checks', () => {
  it('runs the name format on RE2: a catastrophic pattern answers at once, a (?i) flag works as on the service', () => {
    expect(nameProblem({ package_name_format: '^(a+)+$' }, `${'a'.repeat(34)}!`)).toMatch(/must match/);
    expect(nameProblem({ package_name_format: '(?i)^prj-\\d+$' }, 'PRJ-12')).toBeUndefined();
    // JavaScript's engine cannot read (?i) and would let any name through; RE2 refuses this one.
    expect(nameProblem({ package_name_format: '(?i)^prj-\\d+$' }, 'XYZ')).toMatch(/must match/);
  });

  it('leaves a format RE2 cannot run to the service', () => {
    expect(nameProblem({ package_name_format: '^(?!tmp)' }, 'tmp')).toBeUndefined();
  });

  it('refuses a file name with a bidirectional override before sending it', () => {
    expect(fileProblem({}, item('invoice\u202Egnp.exe'))).toMatch(/bidirectional/);
    expect(fileProblem({}, item('invoice.png'))).toBeUndefined();
  });
});
