import { IsIn, IsOptional, IsString } from 'class-validator';
import { NestedList } from '../common/schema';

/** One public key of the access-token signer (RFC 7517). */
export class Jwk {
  @IsIn(['RSA', 'EC'])
  kty: 'RSA' | 'EC';

  @IsString()
  kid: string;

  @IsIn(['sig'])
  use: 'sig';

  @IsIn(['RS256', 'ES256'])
  alg: 'RS256' | 'ES256';

  @IsOptional()
  @IsString()
  n?: string;

  @IsOptional()
  @IsString()
  e?: string;

  @IsOptional()
  @IsString()
  crv?: string;

  @IsOptional()
  @IsString()
  x?: string;

  @IsOptional()
  @IsString()
  y?: string;
}

/** `GET /.well-known/jwks.json`. */
export class JwkSet {
  @NestedList(() => Jwk)
  keys: Jwk[];
}

/** Claims of an access token (DECISIONS.md section 1). */
export interface AccessTokenClaims {
  sub: string;
  aud: 'authenticated';
  role: 'authenticated';
  email: string;
  phone: string;
  session_id: string;
  iat: number;
  exp: number;
  iss: string;
}
