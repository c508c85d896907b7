import { IsEmail, IsString, Length, MaxLength } from 'class-validator';

export class RegisterDto {
  /** @example "Acme Inc." */
  @IsString()
  @Length(1, 200)
  companyName: string;

  /** @example "Ada Lovelace" */
  @IsString()
  @Length(1, 200)
  name: string;

  /** @example ada@acme.example */
  @IsEmail()
  @MaxLength(320)
  email: string;

  /** @example "correct horse battery staple" */
  @IsString()
  @Length(8, 200)
  password: string;
}
