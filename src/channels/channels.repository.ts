import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Channel, CHANNEL_WRITES, MAX_CHANNELS_PER_COMPANY } from './channel.schema.js';

/** A company's channels by key. */
export type ChannelsByKey = ReadonlyMap<string, Stored<Channel>>;

@Injectable()
export class ChannelsRepository extends TenantRepository<Channel> {
  private readonly byCompany = new ReadThroughCache<ChannelsByKey>(CHANNEL_WRITES);

  constructor(@InjectModel(Channel.name) model: Model<Channel>) {
    super(model);
  }

  /**
   * Every channel of the company by key. Every message asks (whether its channel has a reply window), so they are
   * served from memory, all of a company's in one entry (a key without a record costs no read either): a change
   * made in this process applies at once (CHANNEL_WRITES), one made by another process within
   * CROSS_PROCESS_STALENESS_MS. Read-only.
   */
  byKey(companyId: CompanyId): Promise<ChannelsByKey> {
    return this.byCompany.get(String(companyId), async () => {
      const channels = await this.findPlain(companyId, {}, { sort: { key: 1 }, limit: MAX_CHANNELS_PER_COMPANY });
      return new Map(channels.map((channel) => [channel.key, channel]));
    });
  }
}
