import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { LANE_FREE } from './lane.schema.js';
import { LaneStore } from './lane-store.js';
import { LaneWorker } from './lane-worker.js';
import { ScheduledJob } from './scheduled-job.schema.js';

/** Lane kind of the scheduled jobs in the LaneWorker. */
export const SCHEDULED_JOB = 'scheduled-job';
const LEASE_MS = 60_000;

interface Job {
  everyMs: number;
  run: () => Promise<void>;
}

/**
 * Periodic jobs of the deployment, on the shared lanes: each job is one lane document, due again `everyMs`
 * after its last run ended, so exactly one process runs it at a time and a crashed run is taken over when its
 * lease expires. Modules schedule their jobs when they initialise.
 */
@Injectable()
export class ScheduledJobs implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger(ScheduledJobs.name);
  private readonly jobs = new Map<string, Job>();

  constructor(
    @InjectModel(ScheduledJob.name) private readonly model: Model<ScheduledJob>,
    private readonly worker: LaneWorker,
  ) {}

  schedule(name: string, everyMs: number, run: () => Promise<void>): void {
    if (this.jobs.has(name)) throw new Error(`Job ${name} is scheduled twice`);
    this.jobs.set(name, { everyMs, run });
  }

  onModuleInit(): void {
    this.worker.register({
      name: SCHEDULED_JOB,
      // Only the jobs this process runs: another version's jobs are left to the processes that know them.
      store: new LaneStore(this.model, { eligible: () => ({ _id: { $in: [...this.jobs.keys()] } }) }),
      leaseMs: LEASE_MS,
      maxInFlight: 2,
      backlogLabel: '_id',
      run: async (lane, turn) => {
        const job = this.jobs.get(String(lane._id))!;
        try {
          await job.run();
        } catch (error) {
          this.logger.error({ err: error }, `Job ${String(lane._id)} failed; it runs again in ${job.everyMs} ms`);
        }
        await turn.release(new Date(Date.now() + job.everyMs));
      },
    });
  }

  /** Every job has its lane, due at once the first time. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.jobs.size === 0) return;
    const now = new Date();
    await this.model.bulkWrite(
      [...this.jobs.keys()].map((name) => ({
        updateOne: {
          filter: { _id: name },
          update: { $setOnInsert: { nextDueAt: now, queueVersion: 0, leaseOwner: null, leaseUntil: LANE_FREE } },
          upsert: true,
        },
      })),
    );
  }
}
