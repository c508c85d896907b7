import { AppModule } from './app.module.js';
import { serve } from './server.js';

await serve((env) => AppModule.forRoot(env));
