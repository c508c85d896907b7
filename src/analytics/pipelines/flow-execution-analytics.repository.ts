import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository, type CompanyId } from '../../database/tenancy/tenant-repository.js';
import { FlowExecution } from '../../flows/flow-execution.schema.js';
import type { BucketRow } from '../metrics-series.js';
import { bucketOf, within, type BucketWindow } from './bucket-window.js';

/** Flow runs by createdAt, on the {companyId, createdAt} index; completed and failed runs alike. */
@Injectable()
export class FlowExecutionAnalyticsRepository extends TenantRepository<FlowExecution> {
  constructor(@InjectModel(FlowExecution.name) model: Model<FlowExecution>) {
    super(model);
  }

  async buckets(companyId: CompanyId, window: BucketWindow): Promise<BucketRow[]> {
    return this.aggregate<BucketRow>(companyId, [
      { $match: { createdAt: within(window) } },
      { $group: { _id: bucketOf('$createdAt', window), flowsExecuted: { $sum: 1 } } },
    ]);
  }
}
