import { describe, expect, it } from '@jest/globals';
import { countPlaceholders, renderTemplate } from './template-body.js';

describe('template bodies', () => {
  it('counts placeholders numbered from 1 without gaps, repeats allowed', () => {
    expect(countPlaceholders('Your order has shipped.')).toBe(0);
    expect(countPlaceholders('Hi {{1}}, order {{2}} has shipped.')).toBe(2);
    expect(countPlaceholders('{{2}} then {{1}}, and {{1}} again')).toBe(2);
    expect(countPlaceholders('Braces { alone } and {{ are text')).toBe(0);
  });

  it('names the first missing number of a gap', () => {
    expect(countPlaceholders('Hi {{1}}, order {{3}}')).toBe('body placeholders must be numbered from {{1}} without gaps: {{2}} is missing (the highest is {{3}})');
    expect(countPlaceholders('Hi {{2}}')).toContain('{{1}} is missing');
  });

  it('refuses what only looks like a placeholder', () => {
    for (const body of ['Hi {{name}}', 'Hi {{0}}', 'Hi {{01}}', 'Hi {{ 1 }}', 'Hi {{}}', 'Hi {{-1}}']) {
      expect(countPlaceholders(body)).toEqual(expect.stringMatching(/^body placeholders are \{\{1\}\}, \{\{2\}\}, … numbered from 1: \{\{.*\}\} is not one$/));
    }
  });

  it('renders each placeholder with its variable, every time it appears', () => {
    expect(renderTemplate('Hi {{1}}, order {{2}} for {{1}}', ['Grace', '1042'])).toBe('Hi Grace, order 1042 for Grace');
    expect(renderTemplate('No placeholders', [])).toBe('No placeholders');
    // A variable's own braces are not placeholders of the body.
    expect(renderTemplate('{{1}} and {{2}}', ['{{2}}', 'x'])).toBe('{{2}} and x');
  });
});
