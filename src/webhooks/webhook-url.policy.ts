import { Injectable } from '@nestjs/common';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { AppConfig } from '../config/app-config.js';
import { assertPublicUrl, parseWebhookUrl, UnsafeWebhookUrlError } from './delivery/ssrf-guard.js';

/**
 * The registration half of the SSRF rule (the delivery half is in WebhookSender): unless
 * WEBHOOK_ALLOW_PRIVATE_URLS is true, the URL's host must resolve only to public addresses.
 */
@Injectable()
export class WebhookUrlPolicy {
  constructor(private readonly config: AppConfig) {}

  /** A refused URL is a 400 on the `url` field. */
  async assertAllowed(url: string): Promise<void> {
    try {
      if (this.config.webhookAllowPrivateUrls) parseWebhookUrl(url);
      else await assertPublicUrl(url);
    } catch (error) {
      if (!(error instanceof UnsafeWebhookUrlError)) throw error;
      throw new RequestValidationException([{ field: 'url', message: error.message }]);
    }
  }
}
