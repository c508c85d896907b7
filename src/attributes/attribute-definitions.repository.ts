import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository } from '../database/tenancy/tenant-repository.js';
import { AttributeDefinition } from './attribute-definition.schema.js';

@Injectable()
export class AttributeDefinitionsRepository extends TenantRepository<AttributeDefinition> {
  constructor(@InjectModel(AttributeDefinition.name) model: Model<AttributeDefinition>) {
    super(model);
  }
}
