import { Injectable, type OnModuleDestroy } from '@nestjs/common';

/**
 * Whether the application is shutting down: set by the first hook of `app.close()`, before the lanes drain and the
 * HTTP server closes, so readiness answers 503 while in-flight work finishes and a load balancer moves traffic away.
 */
@Injectable()
export class ShutdownState implements OnModuleDestroy {
  private closing = false;

  get shuttingDown(): boolean {
    return this.closing;
  }

  onModuleDestroy(): void {
    this.closing = true;
  }
}
