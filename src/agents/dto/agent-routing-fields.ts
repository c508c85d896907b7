import { ValidateBy, buildMessage } from 'class-validator';
import { CHANNEL_KEY_PATTERN } from '../../conversations/dto/conversation-fields.js';

export const SKILL_PATTERN = /^[a-z0-9_-]{1,50}$/;
const MAX_CHANNEL_LIMITS = 100;

/** `{ <channel key>: 0..100 }`: lower-case channel keys, whole numbers within the capacity's range. */
export const IsCapacityByChannel = () =>
  ValidateBy({
    name: 'isCapacityByChannel',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.keys(value).length <= MAX_CHANNEL_LIMITS &&
        Object.entries(value).every(
          ([key, limit]) => CHANNEL_KEY_PATTERN.test(key) && Number.isInteger(limit) && (limit as number) >= 0 && (limit as number) <= 100,
        ),
      defaultMessage: buildMessage(() => '$property must map channel keys to whole numbers from 0 to 100'),
    },
  });
