import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { FilterModel } from '../filters/index.js';
import { FILTER_SCHEMA_REF } from '../search/filter-schema.js';
import type { SavedView, ViewVisibility } from './saved-view.schema.js';

export class SavedViewView {
  /** @example 6650f0c2a1b2c3d4e5f60750 */
  id: string;
  /** @example "VIP queue" */
  name: string;
  model: FilterModel;
  @ApiProperty({ allOf: [{ $ref: FILTER_SCHEMA_REF }] })
  filter: Record<string, unknown>;
  /** @example lastActivity */
  sort: string;
  visibility: ViewVisibility;
  /** The agent who created it */
  ownerId: string;
  createdAt: string;
  updatedAt: string;

  static from(view: Stored<SavedView>): SavedViewView {
    return {
      id: view._id.toHexString(),
      name: view.name,
      model: view.model,
      filter: view.filter,
      sort: view.sort,
      visibility: view.visibility,
      ownerId: view.ownerId.toHexString(),
      createdAt: view.createdAt.toISOString(),
      updatedAt: view.updatedAt.toISOString(),
    };
  }
}

export class SavedViewListView {
  data: SavedViewView[];
}

export class ViewCountView {
  /** @example 6650f0c2a1b2c3d4e5f60750 */
  viewId: string;
  /** Exact up to 10 000 */
  count: number;
  /** True when more than 10 000 match (count is then 10 000) */
  capped: boolean;
}

export class ViewCountsView {
  data: ViewCountView[];
}

export class DeletedSavedViewView {
  /** @example 6650f0c2a1b2c3d4e5f60750 */
  id: string;
  /** @example true */
  deleted: true;
}
