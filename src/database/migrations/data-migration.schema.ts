import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** A data migration that has completed on this database (DataMigrations). */
@Schema({ collection: 'migrations', versionKey: false })
export class DataMigration {
  /** The migration's name. */
  @Prop({ type: String, required: true })
  _id: string;

  @Prop({ type: Date, required: true })
  completedAt: Date;
}

export const DataMigrationSchema = SchemaFactory.createForClass(DataMigration);
