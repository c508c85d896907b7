// Parley with the example extension, as a team would ship it: `npm run example:digests` (see examples/README.md).
import { Module } from '@nestjs/common';
import { AppModule } from '../src/app.module.js';
import { serve } from '../src/server.js';
import { ConversationDigestsModule } from './conversation-digests/conversation-digests.module.js';

/** The application and the extension side by side: the extension uses only src/extension-points.ts. */
@Module({})
class ParleyWithDigests {}

await serve((env) => ({ module: ParleyWithDigests, imports: [AppModule.forRoot(env), ConversationDigestsModule] }));
