import { Module } from '@nestjs/common';
import { SettingsModule } from '../settings/settings.module.js';
import { BusinessHoursController } from './business-hours.controller.js';
import { BusinessHoursService } from './business-hours.service.js';

/** Business hours as arithmetic (business-calendar.ts), the status route, and the calendar of each company. */
@Module({
  imports: [SettingsModule],
  controllers: [BusinessHoursController],
  providers: [BusinessHoursService],
  exports: [BusinessHoursService],
})
export class BusinessHoursModule {}
