import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiProperty, getSchemaPath } from '@nestjs/swagger';

/** Every Interface A list: `{ data, nextCursor }`; pass `nextCursor` back to get the next page. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** The same page with each record turned into its view. */
export function mapPage<T, V>(page: Page<T>, view: (record: T) => V): Page<V> {
  return { data: page.data.map((record) => view(record)), nextCursor: page.nextCursor };
}

export class PageMeta {
  @ApiProperty({ type: String, nullable: true, description: 'Opaque; null on the last page' })
  nextCursor: string | null;
}

/** Documents a `Page<item>` response in OpenAPI. */
export const ApiPageResponse = (item: Type<unknown>, description = 'One page, newest first') =>
  applyDecorators(
    ApiExtraModels(PageMeta, item),
    ApiOkResponse({
      description,
      schema: {
        allOf: [
          { $ref: getSchemaPath(PageMeta) },
          { properties: { data: { type: 'array', items: { $ref: getSchemaPath(item) } } }, required: ['data'] },
        ],
      },
    }),
  );
