import { ArrayMinSize, ArrayUnique, IsArray, IsIn, IsISO8601, IsString, Length } from 'class-validator';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../auth/auth-principal.js';
import { IsChannelList } from '../../conversations/dto/conversation-fields.js';
import { IsOmittable } from '../../common/dto-decorators.js';

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

  @IsOmittable()
  @IsChannelList(
    'Limits the key to these channels (as conversations name them, case-insensitive): it posts inbound messages and ' +
      'status reports only for them (another channel: 403), and its event feed and streams carry only events of ' +
      'conversations on them. Leave it out for every channel',
  )
  channels?: string[];

  /**
   * When the key stops working (in the future); without it the key works until revoked
   * @example 2027-01-01T00:00:00.000Z
   */
  @IsOmittable()
  @IsISO8601({ strict: true, strictSeparator: true })
  expiresAt?: string;
}
