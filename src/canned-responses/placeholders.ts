/**
 * Canned responses' placeholders (contract section 15): `{{contact.name}}`, `{{contact.phone}}`,
 * `{{contact.email}}`, `{{agent.name}}`, `{{company.name}}`, spaces inside the braces allowed. Checked when a
 * response is saved, rendered when it is sent.
 */
export const PLACEHOLDERS = ['contact.name', 'contact.phone', 'contact.email', 'agent.name', 'company.name'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** The values a response is rendered with; a missing one renders as empty. */
export type PlaceholderValues = Partial<Record<Placeholder, string | null>>;

/** `{{`, then anything up to the next `}}` (or the end: an unclosed one). */
const OPENING = /\{\{([^]*?)(\}\}|$)/g;
const KNOWN = new Set<string>(PLACEHOLDERS);

/** What is wrong with the placeholders of `content`, in plain words; null when every one is known and closed. */
export function placeholderProblem(content: string): string | null {
  for (const [whole, inside, closing] of content.matchAll(OPENING)) {
    if (!closing) return `content has a "{{" that is never closed; placeholders are ${list()}`;
    if (!KNOWN.has(inside.trim())) return `content uses the unknown placeholder ${whole}; the placeholders are ${list()}`;
  }
  return null;
}

/** `content` with each placeholder replaced by its value (empty when missing); `content` must have passed the check. */
export function renderPlaceholders(content: string, values: PlaceholderValues): string {
  return content.replace(OPENING, (_whole, inside: string) => values[inside.trim() as Placeholder] ?? '');
}

function list(): string {
  return PLACEHOLDERS.map((name) => `{{${name}}}`).join(', ');
}
