import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { AttributeDefinition, AttributeModel, AttributeType } from './attribute-definition.schema.js';

export class AttributeDefinitionView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  id: string;
  /** @example contact */
  model: AttributeModel;
  /** @example plan */
  key: string;
  /** @example Plan */
  label: string;
  /** @example list */
  type: AttributeType;
  /** @example ["free","pro","enterprise"] */
  options: string[];
  /** @example "The subscription plan" */
  description: string | null;
  archived: boolean;
  createdAt: string;
  updatedAt: string;

  static from(definition: Stored<AttributeDefinition>): AttributeDefinitionView {
    return {
      id: definition._id.toHexString(),
      model: definition.model,
      key: definition.key,
      label: definition.label,
      type: definition.type,
      options: definition.options ?? [],
      description: definition.description ?? null,
      archived: definition.archived ?? false,
      createdAt: definition.createdAt.toISOString(),
      updatedAt: definition.updatedAt.toISOString(),
    };
  }
}

/** The answer of DELETE /v1/attribute-definitions/:id. */
export class DeletedAttributeDefinitionView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  id: string;
  /** @example true */
  deleted: true;
}
