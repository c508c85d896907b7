import { describe, expect, it } from '@jest/globals';
import { IsOptional, IsString } from 'class-validator';
import { RequestValidationException } from './errors/request-validation.exception.js';
import { RejectOperatorKeysPipe } from './validation.js';

class ProbeDto {
  @IsString()
  name: string;

  @IsOptional()
  @IsString()
  note?: string;
}

const pipe = new RejectOperatorKeysPipe();
const asBody = (value: unknown) => pipe.transform(value, { type: 'body', metatype: ProbeDto });
const withUnknown = (count: number) => ({ name: 'x', ...Object.fromEntries(Array.from({ length: count }, (_, i) => [`extra${i}`, i])) });

describe('RejectOperatorKeysPipe: bodies of many unknown fields', () => {
  it('refuses more unknown fields than an error lists before validation, listing 20 and counting the rest', () => {
    let thrown: unknown;
    try {
      asBody(withUnknown(998));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RequestValidationException);
    const refusal = thrown as RequestValidationException;
    expect(refusal.problems).toHaveLength(20);
    expect(refusal.problems[0]).toEqual({ field: 'extra0', message: 'extra0 is not a field of this body' });
    expect(refusal.unlisted).toBe(978);
  });

  it('leaves a few unknown fields, and declared ones, to the validation pipe, which words every problem', () => {
    expect(asBody(withUnknown(20))).toEqual(withUnknown(20));
    expect(asBody({ name: 'x', note: 'y' })).toEqual({ name: 'x', note: 'y' });
    expect(pipe.transform(withUnknown(50), { type: 'query', metatype: ProbeDto })).toEqual(withUnknown(50));
    expect(pipe.transform(withUnknown(50), { type: 'body', metatype: Object })).toEqual(withUnknown(50));
  });
});
