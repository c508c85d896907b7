import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/**
 * One key's count in one window, shared by every API process (`<throttler>:<key>@<window end>`). Not a
 * company's data: keys are agents, API keys, companies and client addresses, so no tenant scope.
 */
@Schema({ collection: 'rate_limit_counters', versionKey: false })
export class RateLimitCounter {
  @Prop({ type: String, required: true })
  _id: string;

  @Prop({ required: true, default: 0 })
  hits: number;

  @Prop({ type: Date, required: true })
  expiresAt: Date;
}

export const RateLimitCounterSchema = SchemaFactory.createForClass(RateLimitCounter);
// A window's document goes once the window is over.
RateLimitCounterSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
