import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { catchError, type Observable } from 'rxjs';
import { EXAMPLE_ID, type ErrorResponse } from '../common/errors/api-error-responses.js';
import { problemTypeUri, TypedProblemException } from '../common/errors/typed-problem.exception.js';

/** A merged source (a tombstone) asked for by id: 410 naming the contact it lives on as (contract section 22). */
export class ContactMergedException extends TypedProblemException {
  constructor(
    id: string,
    readonly mergedInto: string,
  ) {
    super(410, problemTypeUri('contact-merged'), 'Contact merged', `Contact ${id} was merged into contact ${mergedInto}`, { mergedInto });
  }
}

/** The 410 a merged contact's routes document. */
export const MERGED_CONTACT: ErrorResponse = [410, `Contact ${EXAMPLE_ID} was merged into contact 6650f0c2a1b2c3d4e5f60719`];

/** Adds the canonical `Link` of the surviving contact to a ContactMergedException's answer. */
@Injectable()
export class CanonicalContactLink implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (error instanceof ContactMergedException) {
          context.switchToHttp().getResponse<Response>().setHeader('Link', `</v1/contacts/${error.mergedInto}>; rel="canonical"`);
        }
        throw error;
      }),
    );
  }
}
