import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { auditedPlugin } from '../audit/audited.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

export const TEAM_STRATEGIES = ['round_robin', 'least_busy', 'manual'] as const;
export type TeamStrategy = (typeof TEAM_STRATEGIES)[number];
export const OVERFLOW_ACTIONS = ['team', 'message', 'close'] as const;
export type OverflowAction = (typeof OVERFLOW_ACTIONS)[number];
export const MAX_TEAMS_PER_COMPANY = 100;
export const MAX_TEAM_MEMBERS = 500;
export const MIN_MAX_WAIT_SECONDS = 60;
export const MAX_MAX_WAIT_SECONDS = 604_800;

/** What happens to a conversation still waiting in the team's queue after `maxWaitSeconds`. */
export interface TeamOverflow {
  action: OverflowAction;
  /** `team`: the queue it moves to. */
  teamId: Types.ObjectId | null;
  /** `message`: what the bot sends, once per queue entry. */
  text: string | null;
}

/** A team of agents with its own queue (contract section 19). */
@Schema({ collection: 'teams', timestamps: true })
export class Team {
  @Prop({ required: true, trim: true, maxlength: 100 })
  name: string;

  @Prop({ type: [SchemaTypes.ObjectId], default: [] })
  memberIds: Types.ObjectId[];

  @Prop({ type: String, enum: TEAM_STRATEGIES, required: true, default: 'round_robin' })
  strategy: TeamStrategy;

  @Prop({ type: Number, default: null })
  maxWaitSeconds: number | null;

  @Prop({ type: Object, default: null })
  overflow: TeamOverflow | null;

  @Prop({ required: true, default: true })
  isActive: boolean;
}

export const TeamSchema = SchemaFactory.createForClass(Team);
TeamSchema.plugin(tenantScopePlugin);
TeamSchema.plugin(auditedPlugin);
TeamSchema.plugin(removablePlugin, { freed: 'name' });
TeamSchema.index({ companyId: 1, name: 1 }, { unique: true });
TeamSchema.index({ companyId: 1, _id: -1 });
// An agent's teams (GET /v1/agents/:id) and the teams a deactivated agent leaves.
TeamSchema.index({ companyId: 1, memberIds: 1 });
// The teams overflowing into a team (its deletion clears them).
TeamSchema.index({ companyId: 1, 'overflow.teamId': 1 });
