import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { Company } from './company.schema.js';

export type StoredCompany = Company & { _id: Types.ObjectId; createdAt: Date; updatedAt: Date };

/** Companies are the tenants themselves, so this is the one model read without a company filter. */
@Injectable()
export class CompaniesService {
  constructor(@InjectModel(Company.name) private readonly companies: Model<Company>) {}

  async create(name: string): Promise<StoredCompany> {
    return (await this.companies.create({ name })).toObject() as unknown as StoredCompany;
  }

  async findById(id: Types.ObjectId | string): Promise<StoredCompany | null> {
    return (await this.companies.findById(id).lean().exec()) as StoredCompany | null;
  }

  async remove(id: Types.ObjectId): Promise<void> {
    await this.companies.deleteOne({ _id: id }).exec();
  }
}
