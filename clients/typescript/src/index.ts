// @parley/client: the Parley API's types (generated into ../schema.d.ts) and a thin typed client on openapi-fetch.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from '../schema.js';

export type { components, operations, paths } from '../schema.js';

/** A client of both interfaces: `GET`, `POST`, ... typed by path, parameters, bodies and answers, errors included. */
export type ParleyClient = Client<paths>;

/** The API's named schemas (views and request bodies), e.g. `Schemas['ConversationView']`. */
export type Schemas = components['schemas'];

export interface ParleyClientOptions extends ClientOptions {
  /** The API's address, e.g. `https://parley.example.com`. */
  baseUrl: string;
  /** A bearer token of Interface A (`POST /v1/auth/login`), sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** An API key of Interface B, sent as `x-api-key`. */
  apiKey?: string;
}

/** A typed client of the API at `baseUrl`, with the credential given (or none, for public routes). */
export function createParleyClient({ token, apiKey, ...options }: ParleyClientOptions): ParleyClient {
  const client = createClient<paths>(options);
  if (token !== undefined || apiKey !== undefined) {
    client.use({
      onRequest({ request }) {
        if (token !== undefined) request.headers.set('authorization', `Bearer ${token}`);
        if (apiKey !== undefined) request.headers.set('x-api-key', apiKey);
        return request;
      },
    });
  }
  return client;
}
