import { Module } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { AppConfig } from '../config/app-config.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers } from '../lanes/durable-timers.js';
import { MessagesModule } from '../messages/messages.module.js';
import { GridFsStorageEngine } from './gridfs-storage.engine.js';
import { MediaLinksModule } from './media-links.module.js';
import { MediaStorageModule } from './media-storage.module.js';
import { MediaStorage } from './media-storage.js';
import { ExternalMediaController } from './external-media.controller.js';
import { MediaUploadExpiry } from './media-upload-expiry.js';
import { MediaUploadsService } from './media-uploads.service.js';
import { MediaController } from './media.controller.js';
import { SignedMediaController } from './signed-media.controller.js';
import { MediaService } from './media.service.js';

/**
 * The text fields of a send-media form: conversationId, type, caption (1024 characters, up to 4 KiB in UTF-8); an
 * upload's form has fewer (type).
 */
const MAX_FIELDS = 3;
const MAX_FIELD_BYTES = 4096;

@Module({
  imports: [
    MediaStorageModule,
    MediaLinksModule,
    MessagesModule,
    MulterModule.registerAsync({
      imports: [MediaStorageModule],
      inject: [AppConfig, MediaStorage, DurableTimers, Clock],
      useFactory: (config: AppConfig, storage: MediaStorage, timers: DurableTimers, clock: Clock) => ({
        storage: new GridFsStorageEngine(storage, config.mediaMaxBytes, config.mediaUploadTtlHours * 3_600_000, timers, clock),
        // UTF-8 file names (busboy would read them as Latin-1); one file; busboy stops reading a
        // file part past fileSize, which multer reports as 413.
        defParamCharset: 'utf8',
        limits: {
          fileSize: config.mediaMaxBytes,
          files: 1,
          fields: MAX_FIELDS,
          fieldSize: MAX_FIELD_BYTES,
          parts: MAX_FIELDS + 1,
        },
      }),
    }),
  ],
  controllers: [MediaController, SignedMediaController, ExternalMediaController],
  providers: [MediaService, MediaUploadsService, MediaUploadExpiry],
  exports: [MediaUploadsService],
})
export class MediaModule {}
