import type { StoredCompany } from './companies.service.js';

export class CompanyView {
  /**
   * Also the workspace id of Interface B
   * @example 6650f0c2a1b2c3d4e5f60718
   */
  id: string;
  /** @example "Acme Inc." */
  name: string;
  createdAt: string;
  updatedAt: string;

  static from(company: StoredCompany): CompanyView {
    return {
      id: company._id.toHexString(),
      name: company.name,
      createdAt: company.createdAt.toISOString(),
      updatedAt: company.updatedAt.toISOString(),
    };
  }
}
