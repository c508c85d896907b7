/** A bad variable: the message is one line naming it, printed as is at start-up. */
export class ConfigurationError extends Error {
  constructor(variable: string, problem: string, value?: string) {
    super(`${variable} ${problem}${value === undefined ? '' : ` (got "${value.slice(0, 60)}")`}`);
    this.name = 'ConfigurationError';
  }
}

/**
 * Every bad variable of one reading of the environment, so that one run names them all: `problems` holds one line
 * each, and the message is those lines.
 */
export class ConfigurationErrors extends ConfigurationError {
  readonly problems: string[];

  constructor(errors: ConfigurationError[]) {
    super('', '');
    this.problems = errors.map((error) => error.message);
    this.message = this.problems.join('\n');
    this.name = 'ConfigurationErrors';
  }
}
