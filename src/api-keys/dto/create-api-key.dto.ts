import { ArrayMinSize, ArrayUnique, IsArray, IsIn, IsString, Length } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../auth/auth-principal.js';

export class CreateApiKeyDto {
  /** @example "WhatsApp connector" */
  @IsString()
  @Length(1, 200)
  name: string;

  /** @example ["messages:write"] */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(API_KEY_SCOPES, { each: true })
  scopes: ApiKeyScope[];
}
