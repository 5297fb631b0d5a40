import { Type } from 'class-transformer';
import { IsIn, IsInt, IsString, ValidateNested } from 'class-validator';
import { Nullable } from '../common/schema';
import { User } from './auth-user.dto';

/** Section 2.2. */
export class Session {
  /** JWT for API access (RS256/ES256, see `/.well-known/jwks.json`). */
  @IsString()
  access_token: string;

  /** Opaque, single use: every refresh returns a new one. */
  @IsString()
  refresh_token: string;

  /** Seconds until the access token expires. */
  @IsInt()
  expires_in: number;

  /** Epoch seconds when the access token expires. */
  @IsInt()
  expires_at: number;

  @IsIn(['bearer'])
  token_type: 'bearer';
}

/** `{ user, session }` of every login route. */
export class AuthResponse {
  @ValidateNested()
  @Type(() => User)
  user: User;

  @ValidateNested()
  @Type(() => Session)
  session: Session;
}

/** Signup answers `session: null` while the email or phone awaits confirmation. */
export class SignupResponse {
  @ValidateNested()
  @Type(() => User)
  user: User;

  @ValidateNested()
  @Type(() => Session)
  @Nullable()
  session: Session | null;
}

/** `{ user }` of `PUT /auth/user` and `GET /auth/user`. */
export class UserResponse {
  @ValidateNested()
  @Type(() => User)
  user: User;
}

export class MessageResponse {
  @IsString()
  message: string;
}
