import { HttpException } from '@nestjs/common';

/**
 * An error with its own RFC 9457 problem type: `type` (a URI naming the kind of problem, which clients branch on
 * instead of parsing the message), `title` and extension members (e.g. when something closed) written beside the
 * usual fields. Interface B answers it in its envelope, with the message only.
 */
export class TypedProblemException extends HttpException {
  constructor(
    status: number,
    readonly problemType: string,
    readonly problemTitle: string,
    message: string,
    readonly extensions: Record<string, unknown> = {},
  ) {
    super({ message }, status);
  }
}

/** The URI of one of Parley's own problem types: `urn:parley:problem:<name>`. */
export function problemTypeUri(name: string): string {
  return `urn:parley:problem:${name}`;
}
