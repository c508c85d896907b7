import { Injectable } from '@nestjs/common';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { AppConfig } from '../config/app-config.js';
import { assertAllowedUrl, UnsafeWebhookUrlError, type TargetPolicy } from './delivery/ssrf-guard.js';

/**
 * The registration half of the SSRF rule (the delivery half is in WebhookSender): cloud metadata targets
 * are always refused; unless WEBHOOK_ALLOW_PRIVATE_URLS is true, the URL's host must also resolve only
 * to public addresses.
 */
@Injectable()
export class WebhookUrlPolicy {
  private readonly policy: TargetPolicy;

  constructor(config: AppConfig) {
    this.policy = { allowPrivate: config.webhookAllowPrivateUrls };
  }

  /** A refused URL is a 400 on the `url` field. */
  async assertAllowed(url: string): Promise<void> {
    try {
      await assertAllowedUrl(url, this.policy);
    } catch (error) {
      if (!(error instanceof UnsafeWebhookUrlError)) throw error;
      throw new RequestValidationException([{ field: 'url', message: error.message }]);
    }
  }
}
