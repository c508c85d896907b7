export type NodeEnv = 'development' | 'production' | 'test';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * The validated configuration (contract section 1). Injected by class token:
 * `constructor(private readonly config: AppConfig)`.
 */
export class AppConfig {
  readonly nodeEnv: NodeEnv;
  readonly port: number;
  /** Unset: the embedded MongoDB-compatible engine is started in-process. */
  readonly mongodbUri?: string;
  readonly jwtSecret: string;
  /** True when JWT_SECRET was unset outside production and a random one was made for this process. */
  readonly jwtSecretGenerated: boolean;
  readonly jwtExpiresInSeconds: number;
  readonly throttleLimit: number;
  readonly throttleTtlMs: number;
  readonly mediaMaxBytes: number;
  readonly webhookAllowPrivateUrls: boolean;
  readonly webhookTimeoutMs: number;
  readonly logLevel: LogLevel;
  readonly demoSeed: boolean;
  readonly allowRegistration: boolean;
  /** How long the event log keeps an event (the feed answers 410 for a cursor older than that). */
  readonly eventRetentionDays: number;
  /** How long a finished webhook delivery is kept; 0: for ever. */
  readonly webhookDeliveryRetentionDays: number;
  /** How long a finished flow execution is kept; 0: for ever. */
  readonly flowExecutionRetentionDays: number;

  constructor(values: AppConfig) {
    Object.assign(this, values);
  }
}
