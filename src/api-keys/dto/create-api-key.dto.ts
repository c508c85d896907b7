import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMinSize, ArrayUnique, IsArray, IsIn, IsISO8601, IsOptional, IsString, Length } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../auth/auth-principal.js';

export class CreateApiKeyDto {
  @ApiProperty({ example: 'WhatsApp connector', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ enum: API_KEY_SCOPES, isArray: true, example: ['messages:write'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(API_KEY_SCOPES, { each: true })
  scopes: ApiKeyScope[];

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2027-01-01T00:00:00.000Z',
    description: 'When the key stops working (in the future); without it the key works until revoked',
  })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  expiresAt?: string;
}
