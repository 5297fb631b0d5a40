import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Jwk } from '@hwp/contracts';

export type SigningAlgorithm = 'RS256' | 'ES256';

export interface VerificationKey {
  kid: string;
  alg: SigningAlgorithm;
  key: KeyObject;
}

/** The access-token signer's key and every public key still accepted (rotation). */
export interface SigningKeys {
  signing: VerificationKey & { privateKey: KeyObject };
  /** By kid; includes the signing key's public half. */
  verification: Map<string, VerificationKey>;
  jwks: Jwk[];
}

/** PEM from an environment variable may carry literal `\n` (one-line .env files). */
function normalisePem(pem: string): string {
  return pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem;
}

function algorithmOf(key: KeyObject): SigningAlgorithm {
  if (key.asymmetricKeyType === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < 2048) throw new Error(`RSA signing keys need at least 2048 bits (got ${bits})`);
    return 'RS256';
  }
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new Error('the signing key must be RSA (RS256) or EC P-256 (ES256)');
}

/** RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order. */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const members =
    jwk.kty === 'RSA'
      ? { e: jwk.e, kty: jwk.kty, n: jwk.n }
      : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

function toJwk(key: VerificationKey): Jwk {
  const jwk = key.key.export({ format: 'jwk' });
  return {
    kty: jwk.kty as Jwk['kty'],
    kid: key.kid,
    use: 'sig',
    alg: key.alg,
    ...(jwk.kty === 'RSA' ? { n: jwk.n, e: jwk.e } : { crv: jwk.crv, x: jwk.x, y: jwk.y }),
  };
}

function verificationKey(publicKey: KeyObject, kid?: string): VerificationKey {
  return {
    kid: kid ?? jwkThumbprint(publicKey.export({ format: 'jwk' })),
    alg: algorithmOf(publicKey),
    key: publicKey,
  };
}

/**
 * The generated key of a deployment without JWT_PRIVATE_KEY (development, embedded mode): made once
 * and kept in the data folder, so tokens survive restarts. Production refuses to start without a
 * configured key (config.ts), since replicas would each make their own.
 */
function generatedKeyPem(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    mkdirSync(dirname(path), { recursive: true });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    try {
      writeFileSync(path, pem, { mode: 0o600, flag: 'wx' });
      return pem;
    } catch {
      // Another process wrote it first: use theirs.
      return readFileSync(path, 'utf8');
    }
  }
}

export interface SigningKeyOptions {
  privateKeyPem?: string;
  keyId?: string;
  previousPublicKeysPem?: string;
  /** Where a generated key is kept when no private key is configured. */
  generatedKeyPath: string;
}

export function loadSigningKeys(options: SigningKeyOptions): SigningKeys {
  const pem = options.privateKeyPem
    ? normalisePem(options.privateKeyPem)
    : generatedKeyPem(options.generatedKeyPath);
  const privateKey = createPrivateKey(pem);
  const current = verificationKey(createPublicKey(privateKey), options.keyId);
  const verification = new Map<string, VerificationKey>([[current.kid, current]]);
  const previous = options.previousPublicKeysPem ? normalisePem(options.previousPublicKeysPem) : '';
  for (const block of previous.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? []) {
    const key = verificationKey(createPublicKey(block));
    if (!verification.has(key.kid)) verification.set(key.kid, key);
  }
  return {
    signing: { ...current, privateKey },
    verification,
    jwks: [...verification.values()].map(toJwk),
  };
}
