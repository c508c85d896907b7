import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { SAVED_VIEW_WRITES, SavedView } from './saved-view.schema.js';

@Injectable()
export class SavedViewsRepository extends TenantRepository<SavedView> {
  private readonly byId = new ReadThroughCache<Stored<SavedView> | null>(SAVED_VIEW_WRITES, { keep: (view) => view !== null });

  constructor(@InjectModel(SavedView.name) model: Model<SavedView>) {
    super(model);
  }

  /**
   * A view as its pages read it, served from memory: a change made in this process applies at once
   * (SAVED_VIEW_WRITES), one made by another process within CROSS_PROCESS_STALENESS_MS. A missing view is not
   * kept (one created elsewhere is found at once). Read-only.
   */
  forPages(companyId: CompanyId, _id: Types.ObjectId): Promise<Stored<SavedView> | null> {
    return this.byId.get(`${String(companyId)}:${_id.toHexString()}`, () => this.findOnePlain(companyId, { _id }));
  }
}
