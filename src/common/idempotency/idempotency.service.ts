import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  UnprocessableEntityException,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppConfig } from '../../config/app-config.js';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import type { CapturedAnswer } from './answer-capture.js';
import { AnswerSeal } from './answer-seal.js';
import type { IdempotencyRecord } from './idempotency-record.schema.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { IdempotentReplay } from './idempotent-replay.js';
import type { BodyFingerprint } from './request-fingerprint.js';

/**
 * How long a `running` claim holds its key. A request still running after this (its process died, or
 * it hangs) no longer blocks a retry, which takes the key over and runs.
 */
export const RUNNING_LEASE_MS = 60_000;

/** A claim lost to a concurrent claimer this many times in a row answers 409, like a running one. */
const CLAIM_ATTEMPTS = 3;

const HOUR_MS = 3_600_000;

/** A request sent with an Idempotency-Key, as the key is scoped: company, principal and key, route. */
export interface IdempotentRequest {
  companyId: string;
  /** The Idempotency-Key after its principal (principalScopedKey). */
  key: string;
  /** Method and route pattern, e.g. `POST /v1/conversations/:id/messages`. */
  route: string;
  path: string;
}

/** The key is this request's: it runs, and its answer is kept with `finish`. */
export interface ClaimedKey extends IdempotentRequest {
  claimId: string;
}

/**
 * Idempotent requests (contract section 11, IETF draft-ietf-httpapi-idempotency-key-header): the first
 * request with a key claims it and runs; its answer (status, its own headers, body bytes) is kept
 * IDEMPOTENCY_TTL_HOURS for the company, principal, key and route; a repeat with the same route and body gets that
 * answer again. Answers of 500 or more are not kept. Costs one write to claim and one to keep.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger('Idempotency');
  private readonly ttlMs: number;

  constructor(
    private readonly records: IdempotencyRepository,
    private readonly seal: AnswerSeal,
    config: AppConfig,
  ) {
    this.ttlMs = config.idempotencyTtlHours * HOUR_MS;
  }

  /**
   * Claims the key for `request`, or answers what a repeat gets: the kept answer; or throws 409 while the
   * first request runs, 422 for another route or another body. A kept answer that cannot be opened
   * (JWT_SECRET changed since) counts as gone, like an expired one: the request runs again.
   */
  async begin(request: IdempotentRequest, body: BodyFingerprint): Promise<ClaimedKey | IdempotentReplay> {
    let replacing: string | undefined;
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt += 1) {
      const now = new Date();
      const claimed: ClaimedKey = { ...request, claimId: randomUUID() };
      const { companyId, ...claim } = claimed;
      const lease = { leaseExpiresAt: new Date(now.getTime() + RUNNING_LEASE_MS), expiresAt: new Date(now.getTime() + this.ttlMs) };
      if (await this.records.claim(companyId, { ...claim, ...lease }, now, replacing)) return claimed;
      const kept = await this.records.findByKey(request.companyId, request.key);
      if (!kept) continue; // given up (a 5xx) between the two reads: claim again
      const replay = await this.replayOf(request, kept, body);
      if (replay) return replay;
      replacing = kept.claimId;
    }
    throw this.stillRunning();
  }

  /** Keeps the answer of a claimed key, or gives the key up for a 5xx or a body that could not be read. */
  async finish(claimed: ClaimedKey, answer: CapturedAnswer, fingerprint: string | null): Promise<void> {
    const { companyId, key, claimId } = claimed;
    try {
      if (answer.status >= 500 || fingerprint === null) {
        await this.records.release(companyId, key, claimId);
        return;
      }
      await this.records.complete(companyId, key, claimId, {
        fingerprint,
        status: answer.status,
        headers: answer.headers,
        body: this.seal.seal(answer.body, boundTo(claimed)),
        expiresAt: new Date(Date.now() + this.ttlMs),
      });
    } catch (error) {
      // The claim stays `running` until its lease lapses; a retry then runs again.
      this.logger.error({ err: error, companyId, key }, 'Could not keep the answer of an idempotent request');
    }
  }

  /** The kept answer for a repeat of `request`, the error a repeat gets, or null when it cannot be opened. */
  private async replayOf(
    request: IdempotentRequest,
    kept: Stored<IdempotencyRecord>,
    body: BodyFingerprint,
  ): Promise<IdempotentReplay | null> {
    if (kept.route !== request.route || kept.path !== request.path) {
      throw new UnprocessableEntityException(
        `This Idempotency-Key was used for another request (POST ${kept.path}); use a new key`,
      );
    }
    if (kept.state === 'running') throw this.stillRunning();
    const fingerprint = await body.read();
    if (fingerprint === null) throw new BadRequestException('The request body could not be read');
    if (fingerprint !== kept.fingerprint) {
      throw new UnprocessableEntityException('This Idempotency-Key was used with a different request body; use a new key');
    }
    const opened = kept.body ? this.seal.open(kept.body, boundTo(request)) : null;
    if (!opened) return null;
    return new IdempotentReplay({ status: kept.status ?? 200, headers: kept.headers ?? {}, body: opened });
  }

  private stillRunning(): ConflictException {
    return new ConflictException('A request with this Idempotency-Key is still being processed; retry later');
  }
}

function boundTo(request: IdempotentRequest): string {
  return `${request.companyId}\n${request.key}`;
}
