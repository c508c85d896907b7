import { describe, expect, it } from '@jest/globals';
import { MongoNetworkError, MongoNetworkTimeoutError, MongoServerError, MongoServerSelectionError } from 'mongodb';
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

describe('normalizeException, an unreachable database', () => {
  const unavailable = { status: 503, title: 'Service Unavailable', message: 'The database is unavailable; try again shortly', internal: true, retryAfterSeconds: 5 };

  it("answers the driver's and Mongoose's unreachable errors 503 with Retry-After, none of their words", () => {
    const selection = new MongoServerSelectionError('Server selection timed out after 10000 ms to 10.0.0.7:27017', {} as never);
    expect(normalizeException(selection)).toEqual(unavailable);
    expect(normalizeException(new MongoNetworkError('connection 4 to 10.0.0.7:27017 closed'))).toEqual(unavailable);
    expect(normalizeException(new MongoNetworkTimeoutError('connection timed out'))).toEqual(unavailable);
    expect(normalizeException(new mongoose.Error.MongooseServerSelectionError('Could not connect to any servers'))).toEqual(unavailable);
    expect(normalizeException(new mongoose.Error('Operation `contacts.findOne()` buffering timed out after 10000ms'))).toEqual(unavailable);
  });

  it('leaves the other driver and Mongoose errors 500', () => {
    expect(normalizeException(new MongoServerError({ message: 'unknown operator: $where', code: 2 }))).toMatchObject({ status: 500, internal: true });
    expect(normalizeException(new mongoose.Error('Model.find() no longer accepts a callback'))).toMatchObject({ status: 500, internal: true });
  });
});
