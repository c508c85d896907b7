import { describe, expect, it } from '@jest/globals';
import mongoose, { Schema } from 'mongoose';
import { normalizeException } from './normalize-exception.js';

const Thing = mongoose.model(
  'NormalizeExceptionThing',
  new Schema({ name: { type: String, required: true, maxlength: 3 }, kind: { type: String, enum: ['a', 'b'] }, owner: Schema.Types.ObjectId }),
);

describe('normalizeException, Mongoose errors', () => {
  it('answers a ValidationError with our own message per field, none of Mongoose\'s words or the values', () => {
    const error = new Thing({ name: 'secret-value', kind: 'zzz' }).validateSync();
    const normalized = normalizeException(error);
    expect(normalized).toMatchObject({ status: 400, internal: false });
    expect(normalized.errors).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'name is too long' },
        { field: 'kind', message: 'kind is not one of the allowed values' },
      ]),
    );
    expect(JSON.stringify(normalized)).not.toMatch(/secret-value|zzz|Path|validator|Thing/);
    expect(normalizeException(new Thing({}).validateSync()).errors).toEqual([{ field: 'name', message: 'name is required' }]);
  });

  it('answers a CastError with the field and no value, type or model', () => {
    const error = new mongoose.Error.CastError('ObjectId', 'not-an-id-secret', 'owner');
    const normalized = normalizeException(error);
    expect(normalized).toMatchObject({ status: 400, message: ['owner has an invalid value'], errors: [{ field: 'owner', message: 'owner has an invalid value' }] });
    expect(JSON.stringify(normalized)).not.toMatch(/not-an-id-secret|ObjectId|Cast/);
  });
});
