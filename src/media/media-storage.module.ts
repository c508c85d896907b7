import { Module } from '@nestjs/common';
import { MediaStorage } from './media-storage.js';

/** MediaStorage on its own, so the multer options factory can be given it. */
@Module({
  providers: [MediaStorage],
  exports: [MediaStorage],
})
export class MediaStorageModule {}
