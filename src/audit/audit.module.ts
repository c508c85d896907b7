import { Global, Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AuditLogController } from './audit-log.controller.js';
import { AuditLogEntry, AuditLogEntrySchema } from './audit-log.schema.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditTrail } from './audit-trail.js';

/** The audit log (contract section 23): AuditTrail is global, so every service records its changes the same way. */
@Global()
@Module({
  imports: [MongooseModule.forFeature([{ name: AuditLogEntry.name, schema: AuditLogEntrySchema }])],
  controllers: [AuditLogController],
  providers: [AuditTrail, AuditLogService],
  exports: [AuditTrail],
})
export class AuditModule {}
