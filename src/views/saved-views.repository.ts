import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository } from '../database/tenancy/tenant-repository.js';
import { SavedView } from './saved-view.schema.js';

@Injectable()
export class SavedViewsRepository extends TenantRepository<SavedView> {
  constructor(@InjectModel(SavedView.name) model: Model<SavedView>) {
    super(model);
  }
}
