import { IsEmail, IsString, Length, MaxLength } from 'class-validator';

export class LoginDto {
  /** @example ada@acme.example */
  @IsEmail()
  @MaxLength(320)
  email: string;

  /** @example "correct horse battery staple" */
  @IsString()
  @Length(1, 200)
  password: string;
}
