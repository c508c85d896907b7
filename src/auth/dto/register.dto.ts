import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';

export class RegisterDto {
  @ApiProperty({ example: 'Acme Inc.', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  companyName: string;

  @ApiProperty({ example: 'Ada Lovelace', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ example: 'ada@acme.example', maxLength: 320 })
  @IsEmail()
  @MaxLength(320)
  email: string;

  @ApiProperty({ example: 'correct horse battery staple', minLength: 8, maxLength: 200 })
  @IsString()
  @Length(8, 200)
  password: string;
}
