import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { MessageTemplate, TemplateCategory, TemplateStatus } from './message-template.schema.js';

/** A message template (contract section 17). */
export class MessageTemplateView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  id: string;
  /**
   * The key of the channel it is approved on
   * @example whatsapp
   */
  channel: string;
  /** @example order_shipped */
  name: string;
  /**
   * BCP 47, in canonical case
   * @example en-US
   */
  language: string;
  category: TemplateCategory;
  /** @example "Hi {{1}}, your order {{2}} has shipped." */
  body: string;
  /**
   * How many `variables` a send must give: the body's placeholders {{1}}..{{n}}
   * @example 2
   */
  placeholderCount: number;
  /** `pending` until the channel connector reports the channel's verdict; only `approved` templates can be sent */
  status: TemplateStatus;
  /**
   * Why the channel rejected it; null unless `rejected`
   * @example null
   */
  rejectionReason: string | null;
  createdAt: string;
  updatedAt: string;

  static from(template: Stored<MessageTemplate>): MessageTemplateView {
    return {
      id: template._id.toHexString(),
      channel: template.channel,
      name: template.name,
      language: template.language,
      category: template.category,
      body: template.body,
      placeholderCount: template.placeholderCount,
      status: template.status,
      rejectionReason: template.rejectionReason ?? null,
      createdAt: template.createdAt.toISOString(),
      updatedAt: template.updatedAt.toISOString(),
    };
  }
}

/** The answer of DELETE /v1/message-templates/:id. */
export class DeletedMessageTemplateView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  id: string;
  /** @example true */
  deleted: true;
}
