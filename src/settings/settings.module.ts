import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { SettingsRepository } from './settings.repository.js';
import { Settings, SettingsSchema } from './settings.schema.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: Settings.name, schema: SettingsSchema }])],
  providers: [SettingsRepository],
  exports: [SettingsRepository],
})
export class SettingsModule {}
