import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

/** The tenant of Interface A; its id is also the workspace id of Interface B. */
@Schema({ collection: 'companies', timestamps: true })
export class Company {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;
}

export const CompanySchema = SchemaFactory.createForClass(Company);
