import { IsBoolean, IsIn, IsMongoId, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { PRIVACY_REQUEST_STATUSES, PRIVACY_REQUEST_TYPES, type PrivacyRequestStatus, type PrivacyRequestType } from '../privacy-request.schema.js';

export class EraseContactDto {
  /** Why (kept with the request, shown to admins) */
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export class ExportContactDto {
  /** Private notes too (default false) */
  @IsOptional()
  @IsBoolean()
  includeNotes?: boolean;
}

export class ListPrivacyRequestsQueryDto extends PageQueryDto {
  @IsOptional()
  @IsMongoId()
  contactId?: string;

  @IsOptional()
  @IsIn(PRIVACY_REQUEST_TYPES)
  type?: PrivacyRequestType;

  @IsOptional()
  @IsIn(PRIVACY_REQUEST_STATUSES)
  status?: PrivacyRequestStatus;
}
