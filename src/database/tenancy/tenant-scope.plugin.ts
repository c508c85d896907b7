import type { MongooseQueryMiddleware, Schema } from 'mongoose';

/** Query option that lets one deliberate cross-tenant query through (login by e-mail, API-key lookup by hash). */
export const CROSS_TENANT = 'crossTenant';

const FILTERED_OPERATIONS: MongooseQueryMiddleware[] = [
  'countDocuments',
  'deleteMany',
  'deleteOne',
  'distinct',
  'find',
  'findOne',
  'findOneAndDelete',
  'findOneAndReplace',
  'findOneAndUpdate',
  'replaceOne',
  'updateMany',
  'updateOne',
];

export class MissingTenantFilterError extends Error {
  constructor(model: string, operation: string) {
    super(`${model}.${operation} refused: tenant-scoped queries must filter on companyId`);
    this.name = 'MissingTenantFilterError';
  }
}

/**
 * Declares `companyId` on a tenant-owned schema and refuses, at the Mongoose layer, every query or
 * aggregation that does not filter on it. The repositories add the filter; this plugin is the net
 * under them, so a query written against the raw model cannot leak another company's data.
 */
export function tenantScopePlugin(schema: Schema): void {
  if (!schema.path('companyId')) {
    schema.add({ companyId: { type: 'ObjectId', required: true, immutable: true } });
  }

  schema.pre(FILTERED_OPERATIONS, function (this: any) {
    if (this.getOptions()[CROSS_TENANT] === true) return;
    const filter = this.getFilter();
    if (filter?.companyId === undefined || filter.companyId === null) {
      throw new MissingTenantFilterError(this.model.modelName, this.op);
    }
  });

  schema.pre('aggregate', function (this: any) {
    if (this.options?.[CROSS_TENANT] === true) return;
    const first = this.pipeline()[0];
    if (!first?.$match || first.$match.companyId === undefined) {
      throw new MissingTenantFilterError(this._model?.modelName ?? 'aggregate', 'aggregate');
    }
  });
}
