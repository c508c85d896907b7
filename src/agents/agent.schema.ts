import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Types } from 'mongoose';
import { auditedPlugin } from '../audit/audited.js';
import { ROLES, type Role } from '../auth/auth-principal.js';
import { writeGenerationOf } from '../database/caching/write-generation.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';

export const AGENT_STATUSES = ['online', 'offline', 'away', 'busy'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];
/** Who changed an agent's status: itself, an admin, or its idleness (contract section 19). */
export const STATUS_CHANGE_REASONS = ['agent', 'admin', 'idle'] as const;
export type StatusChangeReason = (typeof STATUS_CHANGE_REASONS)[number];

/** A company's person: logs in when it has a password, works conversations by role. */
@Schema({ collection: 'agents', timestamps: true })
export class Agent extends EventSource {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  @Prop({ required: true, trim: true, lowercase: true, maxlength: 320 })
  email: string;

  @Prop({ type: String, required: true, enum: ROLES, default: 'agent' })
  role: Role;

  @Prop({ type: String, required: true, enum: AGENT_STATUSES, default: 'offline' })
  status: AgentStatus;

  @Prop({ required: true, default: true })
  isActive: boolean;

  /** scrypt hash (see PasswordHasher); never selected unless asked for. */
  @Prop({ type: String, select: false })
  passwordHash?: string;

  /**
   * Bumped whenever the password, the role or isActive changes: a token carries the version it was
   * issued under (`ver`) and is refused once it differs, so such a change ends every earlier session.
   */
  @Prop({ required: true, default: 0 })
  tokenVersion: number;

  /** Set when auto-assignment hands it a conversation: round robin picks the least recent. */
  @Prop({ type: Date, default: null })
  lastAssignedAt: Date | null;

  /** Conversations routing may give it at once; null: the settings' `maxConversationsPerAgent` at the time. */
  @Prop({ type: Number, default: null })
  capacity: number | null;

  /** Per-channel limits, by channel key. */
  @Prop({ type: Object, default: () => ({}) })
  capacityByChannel: Record<string, number>;

  @Prop({ type: [String], default: [] })
  skills: string[];

  /**
   * The open `human` conversations it holds (AgentsRepository's load writes): one entry per conversation, so that
   * counting one in or out is idempotent, with `loadTotal` and `loadByChannel` (keys: channelLoadKey) kept in the same
   * single-document write,
   * which is what lets routing take room only where there is some.
   */
  @Prop({ type: [Object], default: [] })
  held: HeldConversation[];

  @Prop({ type: Number, default: 0 })
  loadTotal: number;

  /** Login tracking (AgentsRepository.recordLogin): written with each login's audit entry, shown by no view. */
  @Prop({ type: Date })
  lastLoginAt?: Date;

  @Prop({ type: Number })
  loginCount?: number;

  /** A wrong password or a deactivated agent (AgentsRepository.recordFailedLogin). */
  @Prop({ type: Date })
  lastFailedLoginAt?: Date;

  @Prop({ type: Number })
  failedLoginCount?: number;

  @Prop({ type: Object, default: () => ({}) })
  loadByChannel: Record<string, number>;
}

/** A channel's key in `loadByChannel`: channel keys may hold '.', which a field path cannot ('%' no key holds). */
export function channelLoadKey(channel: string): string {
  return channel.replace(/\./g, '%2E');
}

/** The agent's load per channel key, without the channels where it holds nothing. */
export function loadByChannelOf(agent: Pick<Agent, 'loadByChannel'>): Record<string, number> {
  const byChannel: Record<string, number> = {};
  for (const [key, count] of Object.entries(agent.loadByChannel ?? {})) if (count > 0) byChannel[key.replace(/%2E/g, '.')] = count;
  return byChannel;
}

/** One conversation counted in an agent's load: since `at`, on channel `ch`. */
export interface HeldConversation {
  c: Types.ObjectId;
  ch: string;
  at: Date;
}

export const AgentSchema = SchemaFactory.createForClass(Agent);
AgentSchema.plugin(tenantScopePlugin);
// Status changes carry `agent.status_changed` (AgentsRepository.changeStatus).
indexPendingEvents(AgentSchema);
AgentSchema.plugin(auditedPlugin);
/** Bumped by every write to agents in this process: authentication's AgentAccessCache follows it. */
export const AGENT_WRITES = writeGenerationOf(AgentSchema);
AgentSchema.index({ companyId: 1, email: 1 }, { unique: true });
// Login is by e-mail alone, so an e-mail that can log in belongs to one agent across all companies.
AgentSchema.index({ email: 1 }, { unique: true, partialFilterExpression: { passwordHash: { $type: 'string' } } });
AgentSchema.index({ companyId: 1, _id: -1 });
AgentSchema.index({ companyId: 1, status: 1, _id: -1 });
// Lists by isActive (and status), and auto-assignment's "active and online" candidates.
AgentSchema.index({ companyId: 1, isActive: 1, status: 1, _id: -1 });
// Holds older than a while whose assignment may never have been written (AgentLoadRepair).
AgentSchema.index({ companyId: 1, 'held.at': 1 });
// The last-active-admin rule.
AgentSchema.index({ companyId: 1, role: 1, isActive: 1 });
