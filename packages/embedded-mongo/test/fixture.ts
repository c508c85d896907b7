import { afterAll, beforeAll } from '@jest/globals';
import { MongoClient, type Db } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo, type EmbeddedMongoOptions } from '../src/index.js';

/** Test documents use numeric and string _ids and free-form fields. */
export type Loose = any;

export interface EngineFixture {
  engine: EmbeddedMongo;
  client: MongoClient;
  db: Db;
}

/** A fresh engine for the enclosing describe block, a connected driver client and database `dbName`. */
export function engineFixture(dbName: string, options?: EmbeddedMongoOptions): EngineFixture {
  const fx = {} as EngineFixture;
  beforeAll(async () => {
    fx.engine = await startEmbeddedMongo(options);
    fx.client = await new MongoClient(fx.engine.uri).connect();
    fx.db = fx.client.db(dbName);
  });
  afterAll(async () => {
    await fx.client.close();
    await fx.engine.stop();
  });
  return fx;
}
