import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { Team, TeamSchema } from './team.schema.js';
import { TeamsRepository } from './teams.repository.js';

/** The teams' schema and repository, which conversations, agents and routing read (the routes: TeamsApiModule). */
@Module({
  imports: [MongooseModule.forFeature([{ name: Team.name, schema: TeamSchema }])],
  providers: [TeamsRepository],
  exports: [TeamsRepository],
})
export class TeamsModule {}
