import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { OverflowAction, Team, TeamStrategy } from './team.schema.js';

export class TeamOverflowView {
  action: OverflowAction;
  /** `team`: the queue a conversation moves to */
  teamId?: string | null;
  /** `message`: what the bot sends once */
  text?: string | null;
}

/** A team (contract section 19). */
export class TeamView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  id: string;
  /** @example Billing */
  name: string;
  memberIds: string[];
  strategy: TeamStrategy;
  /** Seconds a conversation may wait in the queue before `overflow`; null: no limit */
  maxWaitSeconds: number | null;
  overflow: TeamOverflowView | null;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;

  static from(team: Stored<Team>): TeamView {
    return {
      id: team._id.toHexString(),
      name: team.name,
      memberIds: team.memberIds.map((id) => id.toHexString()),
      strategy: team.strategy,
      maxWaitSeconds: team.maxWaitSeconds ?? null,
      overflow: team.overflow
        ? { action: team.overflow.action, teamId: team.overflow.teamId?.toHexString() ?? null, text: team.overflow.text ?? null }
        : null,
      isActive: team.isActive,
      createdAt: team.createdAt.toISOString(),
      updatedAt: team.updatedAt.toISOString(),
    };
  }
}

/** The answer of DELETE /v1/teams/:id. */
export class DeletedTeamView {
  /** @example 6650f0c2a1b2c3d4e5f60740 */
  id: string;
  /** @example true */
  deleted: true;
}
