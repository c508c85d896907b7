import { ApiHideProperty, ApiProperty } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Length } from 'class-validator';
import { IsOmittable, NeverChanges } from '../../common/dto-decorators.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import type { FilterModel } from '../../filters/index.js';
import { FILTER_SCHEMA_REF } from '../../search/filter-schema.js';
import { VIEW_MODELS, VIEW_VISIBILITIES, type ViewVisibility } from '../saved-view.schema.js';

const SORTS_DOC = 'conversations: `created` (default), `lastActivity`, `waiting`; contacts: `created` (default), `name`';

export class CreateSavedViewDto {
  /** @example "VIP queue" */
  @IsString()
  @Length(1, 100)
  name: string;

  /** Never changes */
  @IsIn(VIEW_MODELS)
  model: FilterModel;

  @ApiProperty({ allOf: [{ $ref: FILTER_SCHEMA_REF }], description: 'docs/filters.md; an error answers 400 naming its place' })
  @IsObject()
  filter: Record<string, unknown>;

  @ApiProperty({ required: false, type: String, description: SORTS_DOC, example: 'lastActivity' })
  @IsOptional()
  @IsString()
  sort?: string;

  /** `private`: yours alone (any agent); `company`: every agent sees it, admins create, change and delete it. Never changes */
  @IsIn(VIEW_VISIBILITIES)
  visibility: ViewVisibility;
}

export class UpdateSavedViewDto {
  /** @example "VIP queue" */
  @IsOmittable()
  @IsString()
  @Length(1, 100)
  name?: string;

  @ApiProperty({ required: false, allOf: [{ $ref: FILTER_SCHEMA_REF }] })
  @IsOmittable()
  @IsObject()
  filter?: Record<string, unknown>;

  @ApiProperty({ required: false, type: String, description: SORTS_DOC })
  @IsOmittable()
  @IsString()
  sort?: string;

  @ApiHideProperty()
  @NeverChanges('create a new view instead')
  model?: never;

  @ApiHideProperty()
  @NeverChanges('create a new view instead')
  visibility?: never;
}

export class ViewResultsQueryDto extends PageQueryDto {}
