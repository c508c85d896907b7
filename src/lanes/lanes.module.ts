import { Global, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { Clock } from './clock.js';
import { DurableTimer, DurableTimerSchema } from './durable-timer.schema.js';
import { DurableTimers } from './durable-timers.js';
import { LaneWorker } from './lane-worker.js';
import { ScheduledJob, ScheduledJobSchema } from './scheduled-job.schema.js';
import { ScheduledJobs } from './scheduled-jobs.js';

/**
 * The shared lease / claim / retry mechanism of background work: LaneStore (claims on a collection of lanes),
 * LaneWorker (the process's one scheduler, which every kind of lane registers with), ScheduledJobs (periodic
 * jobs as lanes), DurableTimers (every deadline: one lane per timer), the Clock they measure time by, and the retry
 * schedule. Webhook delivery, the event log's consumers and its sweep are built on it.
 */
@Global()
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: ScheduledJob.name, schema: ScheduledJobSchema },
      { name: DurableTimer.name, schema: DurableTimerSchema },
    ]),
  ],
  providers: [Clock, LaneWorker, ScheduledJobs, DurableTimers],
  exports: [Clock, LaneWorker, ScheduledJobs, DurableTimers],
})
export class LanesModule {}
