import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { TeamsRepository } from '../teams/teams.repository.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { parseObjectId } from '../database/object-id.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { MAX_CHANNELS_PER_COMPANY, WHATSAPP_REPLY_WINDOW_HOURS, type Channel, type ChannelType } from './channel.schema.js';
import { ChannelView, DeletedChannelView } from './channel.view.js';
import { ChannelsRepository } from './channels.repository.js';
import type { CreateChannelDto } from './dto/create-channel.dto.js';
import type { UpdateChannelDto } from './dto/update-channel.dto.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { Types } from 'mongoose';

function defaultReplyWindowHours(type: ChannelType): number | null {
  return type === 'whatsapp' ? WHATSAPP_REPLY_WINDOW_HOURS : null;
}

/**
 * The company's channels (contract section 17) and what messages ask of them: whether a key has a reply window.
 * Those questions are answered from the repository's per-company cache, so a message pays no read for them.
 */
@Injectable()
export class ChannelsService {
  constructor(
    private readonly channels: ChannelsRepository,
    private readonly audit: AuditTrail,
    private readonly teams: TeamsRepository,
  ) {}

  /** The channel record of a key, or null when the key has none. */
  async find(companyId: CompanyId, key: string): Promise<Stored<Channel> | null> {
    return (await this.channels.byKey(companyId)).get(key) ?? null;
  }

  /** The reply window of a key in hours; null when it has none (no record, or a record without a window). */
  async replyWindowHours(companyId: CompanyId, key: string): Promise<number | null> {
    return (await this.find(companyId, key))?.replyWindowHours ?? null;
  }

  /** The keys of the company's channels that have a reply window. */
  async windowedKeys(companyId: CompanyId): Promise<string[]> {
    const windowed: string[] = [];
    for (const [key, channel] of await this.channels.byKey(companyId)) if (channel.replyWindowHours != null) windowed.push(key);
    return windowed;
  }

  async list(companyId: CompanyId, query: PageQueryDto): Promise<Page<ChannelView>> {
    return mapPage(await this.channels.page(companyId, {}, { limit: query.limit, cursor: query.cursor }), ChannelView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<ChannelView> {
    return ChannelView.from(await this.stored(companyId, id));
  }

  /** 409 when the key is taken; 400 past MAX_CHANNELS_PER_COMPANY (which holds under concurrent creates too). */
  async create(companyId: CompanyId, dto: CreateChannelDto, origin: AuditOrigin): Promise<ChannelView> {
    const record: Partial<Channel> = {
      key: dto.key,
      type: dto.type,
      name: dto.name,
      address: dto.address ?? null,
      replyWindowHours: dto.replyWindowHours !== undefined ? dto.replyWindowHours : defaultReplyWindowHours(dto.type),
      isActive: dto.isActive ?? true,
      teamId: await this.teams.referencedId(companyId, dto.teamId ?? null),
    };
    const _id = new Types.ObjectId();
    const entry = stageAudit(origin, 'channel.created', { type: 'channel', id: _id.toHexString() }, changesMade(null, record));
    let created: Stored<Channel> | null;
    try {
      created = await insertWithinCap({
        cap: MAX_CHANNELS_PER_COMPANY,
        count: () => this.channels.count(companyId),
        insert: () => this.channels.create(companyId, { _id, ...record, pendingAudit: [entry] } as Partial<Channel>),
        undo: async (channel) => void (await this.channels.deleteOne(companyId, { _id: channel._id })),
      });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new ConflictException(`A channel with key ${dto.key} already exists in your company`);
      throw error;
    }
    if (!created) throw new BadRequestException(`A company can have at most ${MAX_CHANNELS_PER_COMPANY} channels`);
    this.audit.written(companyId, this.channels.collectionName, _id, [entry]);
    return ChannelView.from(created);
  }

  async update(companyId: CompanyId, id: string, dto: UpdateChannelDto, origin: AuditOrigin): Promise<ChannelView> {
    const current = await this.stored(companyId, id);
    const set: Partial<Channel> = {};
    if (dto.name !== undefined) set.name = dto.name;
    if (dto.address !== undefined) set.address = dto.address;
    if (dto.replyWindowHours !== undefined) set.replyWindowHours = dto.replyWindowHours;
    if (dto.isActive !== undefined) set.isActive = dto.isActive;
    if (dto.teamId !== undefined) set.teamId = await this.teams.referencedId(companyId, dto.teamId);
    if (Object.keys(set).length === 0) return ChannelView.from(current);
    const entry = stageAudit(origin, 'channel.updated', { type: 'channel', id: current._id.toHexString() }, changesMade(current, set));
    const updated = await this.channels.updateOne(companyId, { _id: current._id }, withAudit({ $set: set }, entry));
    if (!updated) throw this.notFound(id);
    this.audit.written(companyId, this.channels.collectionName, current._id, [entry]);
    return ChannelView.from(updated);
  }

  /** Its conversations stay, and behave as on a key without a record from then on (no reply window). */
  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedChannelView> {
    const _id = parseObjectId(id);
    if (!_id) throw this.notFound(id);
    const entry = stageAudit(origin, 'channel.deleted', { type: 'channel', id: _id.toHexString() });
    if (!(await this.channels.removeAudited(companyId, { _id }, entry))) throw this.notFound(id);
    this.audit.written(companyId, this.channels.collectionName, _id, [entry]);
    return { id: _id.toHexString(), deleted: true };
  }

  private async stored(companyId: CompanyId, id: string): Promise<Stored<Channel>> {
    const channel = await this.channels.findById(companyId, id);
    if (!channel) throw this.notFound(id);
    return channel;
  }

  private notFound(id: string): NotFoundException {
    return new NotFoundException(`Channel ${id} not found`);
  }
}
