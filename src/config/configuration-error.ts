/** A bad variable: the message is one line naming it, printed as is at start-up. */
export class ConfigurationError extends Error {
  constructor(variable: string, problem: string, value?: string) {
    super(`${variable} ${problem}${value === undefined ? '' : ` (got "${value.slice(0, 60)}")`}`);
    this.name = 'ConfigurationError';
  }
}
