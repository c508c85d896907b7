import { applyDecorators, SetMetadata } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';

export const IS_PUBLIC = 'auth:public';

/** OpenAPI `security: []`: the operation takes no credentials (Nest's @ApiSecurity can only add schemes). */
const ApiNoSecurity = (): ClassDecorator & MethodDecorator =>
  ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    Reflect.defineMetadata(DECORATORS.API_SECURITY, [], descriptor ? descriptor.value : target);
  }) as ClassDecorator & MethodDecorator;

/** Opts a route out of the global authentication guard (login, register, health), and says so in OpenAPI. */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiNoSecurity());
