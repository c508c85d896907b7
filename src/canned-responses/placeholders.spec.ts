import { describe, expect, it } from '@jest/globals';
import { placeholderProblem, renderPlaceholders } from './placeholders.js';

describe('canned response placeholders', () => {
  it.each([
    'No placeholders at all',
    'Hi {{contact.name}}, {{agent.name}} from {{company.name}} here.',
    'We have {{contact.phone}} and {{contact.email}} on file.',
    'Spaces inside the braces: {{ contact.name }}',
    'A lone closing }} or a single { brace is text',
    '',
  ])('accepts %j', (content) => {
    expect(placeholderProblem(content)).toBeNull();
  });

  it.each([
    ['an unknown name', 'Hi {{contact.first_name}}', 'unknown placeholder {{contact.first_name}}'],
    ['an empty one', 'Hi {{}}', 'unknown placeholder {{}}'],
    ['a case variant', 'Hi {{Contact.Name}}', 'unknown placeholder {{Contact.Name}}'],
    ['another syntax inside', 'Hi {{contact.name | upper}}', 'unknown placeholder {{contact.name | upper}}'],
    ['one never closed', 'Hi {{contact.name', 'never closed'],
    ['one closed after another opens', 'Hi {{ {{contact.name}}', 'unknown placeholder {{ {{contact.name}}'],
  ])('refuses %s, naming it and listing the placeholders', (_, content, problem) => {
    const message = placeholderProblem(content);
    expect(message).toContain(problem);
    expect(message).toContain('{{contact.name}}, {{contact.phone}}, {{contact.email}}, {{agent.name}}, {{company.name}}');
  });

  it('renders every placeholder with its value, spaces inside the braces or not', () => {
    const content = 'Hi {{contact.name}} ({{ contact.email }}, {{contact.phone}}), {{agent.name}} of {{company.name}}.';
    expect(
      renderPlaceholders(content, {
        'contact.name': 'Grace',
        'contact.email': 'grace@example.com',
        'contact.phone': '+14155552671',
        'agent.name': 'Ada',
        'company.name': 'Acme',
      }),
    ).toBe('Hi Grace (grace@example.com, +14155552671), Ada of Acme.');
  });

  it('renders a missing or null value as empty', () => {
    expect(renderPlaceholders('Hi {{contact.name}}! {{agent.name}}', { 'contact.name': null })).toBe('Hi ! ');
  });

  it('does not read placeholders inside the values it puts in', () => {
    expect(renderPlaceholders('Hi {{contact.name}}', { 'contact.name': '{{agent.name}}', 'agent.name': 'Ada' })).toBe('Hi {{agent.name}}');
  });

  it('leaves the text around placeholders as it is, line breaks and dollar signs included', () => {
    expect(renderPlaceholders('Total: $5 $& $1\n{{company.name}}', { 'company.name': 'A$1' })).toBe('Total: $5 $& $1\nA$1');
  });
});
