import { PartialType } from '@nestjs/swagger';
import { CreateExternalWebhookDto } from './create-webhook.dto.js';

/** `PATCH` on either interface: any of the fields; `isActive: false` pauses, `true` resumes. */
export class UpdateWebhookDto extends PartialType(CreateExternalWebhookDto) {}
