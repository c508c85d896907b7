import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { CompaniesService } from './companies.service.js';
import { Company, CompanySchema } from './company.schema.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: Company.name, schema: CompanySchema }])],
  providers: [CompaniesService],
  exports: [CompaniesService],
})
export class CompaniesModule {}
