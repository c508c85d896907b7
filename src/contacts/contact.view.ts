import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Contact } from './contact.schema.js';

export class ContactView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60719' }) id: string;
  @ApiProperty({ type: String, nullable: true, example: 'Grace Hopper' }) name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'grace@example.com' }) email: string | null;
  @ApiProperty({ type: String, nullable: true, example: '+15551234567' }) phone: string | null;
  @ApiProperty({ type: [String], example: ['vip'] }) tags: string[];
  @ApiProperty({ type: 'object', additionalProperties: true, example: { plan: 'pro' } })
  attributes: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(contact: Stored<Contact>): ContactView {
    return {
      id: contact._id.toHexString(),
      name: contact.name ?? null,
      email: contact.email ?? null,
      phone: contact.phone ?? null,
      tags: contact.tags,
      attributes: contact.attributes ?? {},
      createdAt: contact.createdAt.toISOString(),
      updatedAt: contact.updatedAt.toISOString(),
    };
  }
}

/** The answer of DELETE /v1/contacts/:id. */
export class DeletedContactView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60719' }) id: string;
  @ApiProperty({ example: true, enum: [true] }) deleted: true;
}
