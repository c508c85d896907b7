import { Module } from '@nestjs/common';
import { MediaLinks } from './media-links.js';

/** MediaLinks on its own, for the modules whose REST answers show messages (and the route that serves the links). */
@Module({
  providers: [MediaLinks],
  exports: [MediaLinks],
})
export class MediaLinksModule {}
