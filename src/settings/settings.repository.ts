import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository } from '../database/tenancy/tenant-repository.js';
import { Settings } from './settings.schema.js';

@Injectable()
export class SettingsRepository extends TenantRepository<Settings> {
  constructor(@InjectModel(Settings.name) model: Model<Settings>) {
    super(model);
  }
}
