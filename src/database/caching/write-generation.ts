import type { MongooseDocumentMiddleware, MongooseQueryMiddleware, Schema } from 'mongoose';

/**
 * Counts the writes made to one collection through its Mongoose model in this process (every app
 * instance in the process shares the count). A value read while the count was n is stale once it moves.
 */
export class WriteGeneration {
  private count = 0;

  get current(): number {
    return this.count;
  }

  bump(): void {
    this.count += 1;
  }
}

const QUERY_WRITES: MongooseQueryMiddleware[] = [
  'updateOne',
  'updateMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'replaceOne',
  'deleteOne',
  'deleteMany',
];
const DOCUMENT_WRITES: MongooseDocumentMiddleware[] = ['save', 'updateOne', 'deleteOne'];

/**
 * A schema plugin that bumps `generation` once each write through the model is done, whether it
 * succeeded or failed (a failed multi-document write may have applied in part). Writes made by other
 * processes, or through the driver's collection directly, are not seen: caches bound those by a TTL.
 */
export function trackWrites(generation: WriteGeneration) {
  return (schema: Schema): void => {
    const bump = () => generation.bump();
    const bumpOnError = (error: Error, _result: unknown, next: (error?: Error) => void) => {
      generation.bump();
      next(error);
    };
    schema.post(QUERY_WRITES, bump);
    schema.post(QUERY_WRITES, { errorHandler: true }, bumpOnError);
    schema.post(DOCUMENT_WRITES, { document: true, query: false }, bump);
    schema.post(DOCUMENT_WRITES, { document: true, query: false, errorHandler: true }, bumpOnError);
    schema.post('insertMany', bump);
    schema.post('insertMany', { errorHandler: true }, bumpOnError);
    schema.post('bulkWrite', bump);
    schema.post('bulkWrite', { errorHandler: true }, bumpOnError);
  };
}

/** A new generation that `schema`'s writes move (the schema gets the trackWrites plugin). */
export function writeGenerationOf(schema: Schema): WriteGeneration {
  const generation = new WriteGeneration();
  schema.plugin(trackWrites(generation));
  return generation;
}
