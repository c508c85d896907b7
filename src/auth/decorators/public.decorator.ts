import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'auth:public';

/** Opts a route out of the global authentication guard (login, register, health). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
