import { describe, expect, it } from '@jest/globals';
import { Type } from 'class-transformer';
import { IsArray, IsInt, IsOptional, IsString } from 'class-validator';
import { createValidationPipe } from './validation.js';

class SampleQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  limit: number = 50;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  tags?: string[];
}

describe('the global validation pipe, on queries', () => {
  const pipe = createValidationPipe();
  const query = { type: 'query' as const, metatype: SampleQuery };

  it('answers a repeated query with a copy of the DTO it made the first time', async () => {
    const first = (await pipe.transform({ limit: '10', tags: ['a', 'b'] }, query)) as SampleQuery;
    expect(first).toBeInstanceOf(SampleQuery);
    expect(first).toEqual({ limit: 10, tags: ['a', 'b'] });
    first.tags!.push('changed');
    first.limit = 1;
    const second = (await pipe.transform({ limit: '10', tags: ['a', 'b'] }, query)) as SampleQuery;
    expect(second).toBeInstanceOf(SampleQuery);
    expect(second).toEqual({ limit: 10, tags: ['a', 'b'] });
    expect(await pipe.transform({}, query)).toEqual({ limit: 50 });
  });

  it('validates a refused query every time, and bodies as ever', async () => {
    for (let i = 0; i < 2; i++) await expect(pipe.transform({ limit: 'ten' }, query)).rejects.toMatchObject({ status: 400 });
    await expect(pipe.transform({ limit: 'ten' }, { type: 'body', metatype: SampleQuery })).rejects.toMatchObject({ status: 400 });
  });
});
