import { ApiProperty } from '@nestjs/swagger';
import type { StoredCompany } from './companies.service.js';

export class CompanyView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718', description: 'Also the workspace id of Interface B' }) id: string;
  @ApiProperty({ example: 'Acme Inc.' }) name: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(company: StoredCompany): CompanyView {
    return {
      id: company._id.toHexString(),
      name: company.name,
      createdAt: company.createdAt.toISOString(),
      updatedAt: company.updatedAt.toISOString(),
    };
  }
}
