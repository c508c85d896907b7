import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath } from '@nestjs/swagger';

/** Interface B's success answers (contract section 8). */
export interface DataEnvelope<T> {
  success: true;
  data: T;
}

export function envelope<T>(data: T): DataEnvelope<T> {
  return { success: true, data };
}

export class MessageEnvelope {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ example: 'Webhook wh_6650f0c2a1b2c3d4e5f60718 deleted' }) message: string;
}

/** Documents `{ success: true, data: <model> }` (or `data: <model>[]`). */
export const ApiDataEnvelope = (status: number, model: Type<unknown>, options: { isArray?: boolean; description: string }) =>
  applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description: options.description,
      schema: {
        type: 'object',
        required: ['success', 'data'],
        properties: {
          success: { type: 'boolean', example: true },
          data: options.isArray ? { type: 'array', items: { $ref: getSchemaPath(model) } } : { $ref: getSchemaPath(model) },
        },
      },
    }),
  );
