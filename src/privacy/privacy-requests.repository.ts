import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter, UpdateQuery } from 'mongoose';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import type { PendingEvent } from '../events/pending-event.schema.js';
import { PrivacyRequest } from './privacy-request.schema.js';

@Injectable()
export class PrivacyRequestsRepository extends EventSourceRepository<PrivacyRequest> {
  constructor(@InjectModel(PrivacyRequest.name) model: Model<PrivacyRequest>, relay: EventRelay) {
    super(model, relay);
  }

  /** Applies `update` (with `events`) if the request still matches `filter`; null when it moved on meanwhile. */
  transition(
    companyId: CompanyId,
    filter: QueryFilter<PrivacyRequest>,
    update: UpdateQuery<PrivacyRequest>,
    events: PendingEvent[] = [],
  ): Promise<Stored<PrivacyRequest> | null> {
    return this.updateWithEvents(companyId, filter, update, events);
  }
}
