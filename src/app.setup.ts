import { VersioningType, type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { InterfaceExceptionFilter } from './common/errors/interface-exception.filter.js';
import { earlyRequestMiddleware } from './common/logging/early-request.middleware.js';
import { createValidationPipe, RejectOperatorKeysPipe } from './common/validation.js';
import { setupSwagger } from './swagger.js';

/** The largest JSON body accepted; media uploads are multipart and limited by MEDIA_MAX_BYTES instead. */
export const JSON_BODY_LIMIT = '1mb';

/**
 * Everything main.ts and the end-to-end tests share: versioned routes (`/v1` for Interface A,
 * version-neutral `/api/external` for Interface B), body parsing, validation, error bodies, docs.
 * The app must be created with `bodyParser: false` so that the parser's limit is set here.
 */
export function configureApp(app: INestApplication): INestApplication {
  const express = app as NestExpressApplication;
  // First, so that even a body the parsers refuse gets a request id and a log line.
  express.use(earlyRequestMiddleware);
  express.disable('x-powered-by');
  // API responses are not cacheable; computing an ETag per JSON body would be wasted work.
  express.set('etag', false);
  express.useBodyParser('json', { limit: JSON_BODY_LIMIT });
  express.useBodyParser('urlencoded', { limit: JSON_BODY_LIMIT, extended: false });
  app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' });
  app.useGlobalPipes(new RejectOperatorKeysPipe(), createValidationPipe());
  app.useGlobalFilters(new InterfaceExceptionFilter());
  setupSwagger(app);
  return app;
}
