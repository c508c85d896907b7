import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AttributeDefinition, AttributeDefinitionSchema } from './attribute-definition.schema.js';
import { AttributeDefinitionsController } from './attribute-definitions.controller.js';
import { AttributeDefinitionsRepository } from './attribute-definitions.repository.js';
import { AttributeDefinitionsService } from './attribute-definitions.service.js';

/**
 * `/v1/attribute-definitions`: the typed custom attributes of contacts and conversations (contract section 20). The
 * records holding values check them here, and remove a deleted key's values on ATTRIBUTE_VALUES_REMOVED.
 */
@Module({
  imports: [MongooseModule.forFeature([{ name: AttributeDefinition.name, schema: AttributeDefinitionSchema }])],
  controllers: [AttributeDefinitionsController],
  providers: [AttributeDefinitionsRepository, AttributeDefinitionsService],
  exports: [AttributeDefinitionsService],
})
export class AttributesModule {}
