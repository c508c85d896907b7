import { describe, expect, it } from '@jest/globals';
import { Type } from 'class-transformer';
import { ArrayUnique, IsArray, IsEmail, IsISO8601, IsMongoId, IsOptional, IsString, Length, MaxLength, ValidateNested } from 'class-validator';
import { RequestValidationException } from './errors/request-validation.exception.js';
import { createValidationPipe } from './validation.js';

class SenderDto {
  @IsOptional()
  @IsEmail()
  email?: string;
}

class MessageDto {
  @IsString()
  @Length(1, 4096)
  text: string;

  @IsOptional()
  @IsMongoId()
  agentId?: string;

  @IsOptional()
  @IsMongoId({ message: 'conversationId must be the id of a conversation' })
  conversationId?: string;

  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsString({ each: true })
  @MaxLength(20, { each: true })
  tags?: string[];

  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => SenderDto)
  from?: SenderDto;
}

async function problems(value: unknown, type: 'body' | 'query' = 'body') {
  try {
    await createValidationPipe().transform(value, { type, metatype: MessageDto });
  } catch (error) {
    expect(error).toBeInstanceOf(RequestValidationException);
    return (error as RequestValidationException).problems;
  }
  throw new Error('the value was accepted');
}

describe('validation messages, in plain words naming the field and what is allowed', () => {
  it('a value of the wrong kind gets that one problem, not also the checks that assume the kind', async () => {
    expect(await problems({ text: 42 })).toEqual([{ field: 'text', message: 'text must be a string' }]);
    expect(await problems({ text: 'hi', tags: 'vip' })).toEqual([{ field: 'tags', message: 'tags must be an array' }]);
  });

  it('ids, e-mail addresses, times, duplicates and empty strings say what is expected', async () => {
    expect(await problems({ text: '', agentId: 'me', tags: ['a', 'a'], since: 'yesterday', from: { email: 'nope' } })).toEqual([
      { field: 'text', message: 'text must not be empty' },
      { field: 'agentId', message: 'agentId must be a 24-character hex id' },
      { field: 'tags', message: 'tags must not list the same value twice' },
      { field: 'since', message: 'since must be an ISO-8601 date and time, such as 2026-05-01T12:00:00Z' },
      { field: 'from.email', message: 'from.email must be an e-mail address' },
    ]);
    expect(await problems({ text: 'x'.repeat(4097) })).toEqual([{ field: 'text', message: 'text must be shorter than or equal to 4096 characters' }]);
  });

  it("keeps a DTO's own message", async () => {
    expect(await problems({ text: 'hi', conversationId: '42' })).toEqual([
      { field: 'conversationId', message: 'conversationId must be the id of a conversation' },
    ]);
  });

  it('an unknown name is not a field of the body, or not a parameter of the query; a nested one is named by its path', async () => {
    expect(await problems({ text: 'hi', admin: true, from: { email: 'a@b.example', role: 'x' } })).toEqual([
      { field: 'admin', message: 'admin is not a field of this body' },
      { field: 'from.role', message: 'from.role is not a field of this body' },
    ]);
    expect(await problems({ text: 'hi', sort: 'newest' }, 'query')).toEqual([{ field: 'sort', message: 'sort is not a parameter of this query' }]);
  });

  it('a nested object given as something else', async () => {
    expect(await problems({ text: 'hi', from: 'ada@example.com' })).toEqual([{ field: 'from', message: 'from must be an object' }]);
  });
});
