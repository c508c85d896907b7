import { Types } from 'mongoose';

/** A 24-hex-digit id, or null: a malformed path id answers 404 exactly like a missing one. */
export function parseObjectId(value: unknown): Types.ObjectId | null {
  return typeof value === 'string' && /^[0-9a-fA-F]{24}$/.test(value) ? new Types.ObjectId(value) : null;
}

export function toObjectId(value: string | Types.ObjectId): Types.ObjectId {
  return typeof value === 'string' ? new Types.ObjectId(value) : value;
}
