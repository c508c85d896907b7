/** Anything between double braces: the placeholders, and what only looks like one. */
const BRACED = /\{\{([^{}]*)\}\}/g;
const NUMBERED = /^[1-9][0-9]*$/;

/**
 * The number of placeholders of a template body, `{{1}}` to `{{n}}` numbered from 1 without gaps (each may appear
 * more than once), as the channels require; a string saying what is wrong otherwise.
 */
export function countPlaceholders(body: string): number | string {
  const numbers = new Set<number>();
  for (const [braced, inside] of body.matchAll(BRACED)) {
    if (!NUMBERED.test(inside)) return `body placeholders are {{1}}, {{2}}, … numbered from 1: ${braced} is not one`;
    numbers.add(Number(inside));
  }
  const highest = Math.max(0, ...numbers);
  for (let n = 1; n <= highest; n += 1) {
    if (!numbers.has(n)) return `body placeholders must be numbered from {{1}} without gaps: {{${n}}} is missing (the highest is {{${highest}}})`;
  }
  return highest;
}

/** The body with `{{i}}` replaced by `variables[i - 1]`; the body's placeholders were checked when it was stored. */
export function renderTemplate(body: string, variables: readonly string[]): string {
  return body.replace(BRACED, (braced, inside: string) => (NUMBERED.test(inside) ? (variables[Number(inside) - 1] ?? braced) : braced));
}
