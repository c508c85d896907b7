import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { CannedResponse } from './canned-response.schema.js';

export class CannedResponseView {
  /** @example 6650f0c2a1b2c3d4e5f60730 */
  id: string;
  /** @example refund-sent */
  shortCode: string;
  /** @example Refund on its way */
  title: string;
  /** @example "Hi {{contact.name}}, your refund is on its way. {{agent.name}}, {{company.name}}" */
  content: string;
  createdAt: string;
  updatedAt: string;

  static from(response: Stored<CannedResponse>): CannedResponseView {
    return {
      id: response._id.toHexString(),
      shortCode: response.shortCode,
      title: response.title,
      content: response.content,
      createdAt: response.createdAt.toISOString(),
      updatedAt: response.updatedAt.toISOString(),
    };
  }
}

/** The answer of DELETE /v1/canned-responses/:id. */
export class DeletedCannedResponseView {
  /** @example 6650f0c2a1b2c3d4e5f60730 */
  id: string;
  /** @example true */
  deleted: true;
}
