import { SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { problemTypeUri, TypedProblemException } from './errors/typed-problem.exception.js';

/** What the body parsers of every route read (configureApp). */
export const PARSED_BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded'] as const;
export const MULTIPART = 'multipart/form-data';

const READS_FILES = 'parley:readsFiles';

/** Marks a route whose own interceptor reads multipart/form-data bodies (UploadsOneFile). */
export const ReadsFiles = () => SetMetadata(READS_FILES, true);

/** A body with bytes in it (a `Content-Length: 0` or no length at all is none), or one sent in chunks. */
function carriesBody(request: Request): boolean {
  return Number(request.headers['content-length']) > 0 || request.headers['transfer-encoding'] !== undefined;
}

/** The 415 of a body sent in a type the route does not read, naming the types it does. */
export class UnsupportedBodyTypeException extends TypedProblemException {
  constructor(contentType: string | undefined, accepted: readonly string[]) {
    const given = contentType === undefined ? 'no Content-Type' : `Content-Type ${contentType.split(';')[0]!.trim().slice(0, 100)}`;
    super(
      415,
      problemTypeUri('unsupported-media-type'),
      'Unsupported Media Type',
      `The request body has ${given}; this route reads ${accepted.join(' or ')}`,
      {
        accepted,
      },
    );
  }
}

/**
 * A body the server does not read is never a success: one sent as text/plain, or without a Content-Type, used to
 * be skipped by every parser, so a PATCH answered 200 changing nothing. Any body the parsers left unread (the stream
 * of one they read has ended), and a multipart one on a route that reads no files, answers 415. A global guard,
 * first of all: the route is known (its files) and nothing else has looked at the body.
 */
export class UnreadBodyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (request.readableEnded || !carriesBody(request)) return true;
    const readsFiles = this.reflector.getAllAndOverride<boolean>(READS_FILES, [context.getHandler(), context.getClass()]) === true;
    if (readsFiles && request.is(MULTIPART)) return true;
    throw new UnsupportedBodyTypeException(request.headers['content-type'], readsFiles ? [MULTIPART] : PARSED_BODY_TYPES);
  }
}
