import { parseArgs } from 'node:util';

/**
 * The script's numeric options (`--backlog 5000`), each defaulting to its value in `defaults`; an option not in
 * `defaults` is refused, as parseArgs does.
 */
export function numericOptions(defaults) {
  const { values } = parseArgs({
    options: Object.fromEntries(Object.entries(defaults).map(([name, value]) => [name, { type: 'string', default: String(value) }])),
  });
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, Number(value)]));
}
