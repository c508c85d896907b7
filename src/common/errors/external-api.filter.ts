import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { NormalizedError } from './normalize-exception.js';
import { normalizeException } from './normalize-exception.js';

export const EXTERNAL_API_PREFIX = '/api/external';
/** What a 401 of Interface B asks for (RFC 9110 requires a challenge on every 401). */
export const API_KEY_CHALLENGE = 'ApiKey header="x-api-key"';

/** Interface B: `{ success: false, error }`, every failure included (contract section 8). */
@Catch()
export class ExternalApiExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.write(http.getRequest<Request>(), http.getResponse<Response>(), normalizeException(exception));
  }

  write(_request: Request, response: Response, error: NormalizedError): void {
    if (error.status === 401) response.setHeader('WWW-Authenticate', API_KEY_CHALLENGE);
    if (error.retryAfterSeconds) response.setHeader('Retry-After', String(error.retryAfterSeconds));
    const message = Array.isArray(error.message) ? error.message.join('; ') : error.message;
    response.status(error.status).json({ success: false, error: message });
  }
}
