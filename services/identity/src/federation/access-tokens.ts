import { randomBytes, randomUUID } from "node:crypto";
import { accessTokenAudience, accessTokenIssuer, type AccessTokenClaims } from "@switchyard/contracts";
import type { Db, Logger } from "@switchyard/runtime";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from "jose";
import type { Sealer } from "../provider-keys/sealed.js";

const algorithm = "ES256";
/** A signing key signs for this long, then a new one takes over. */
const rotateAfterMs = 30 * 86_400_000;
/** A retired key stays published this long: past the longest-lived token it signed (15 minutes). */
const publishedAfterRetirementMs = 3_600_000;

interface SigningKeyRow {
  kid: string;
  sealed_private_jwk: string | null;
  created_at: Date;
}

/** The sealed private key is bound to its kid: copied onto another row, it does not open. */
const sealContext = (kid: string) => `access-token signing key\0${kid}`;

export interface AccessTokens {
  /** False without an encryption secret: then no private key is stored or used, and nothing is issued. */
  readonly canSign: boolean;
  /** Signs an access token acting as `claims.sub` (the target key's hash) for `expiresIn` seconds. */
  issue(claims: Omit<AccessTokenClaims, "jti">, expiresIn: number): Promise<string>;
  /** Public keys of every key whose tokens may still be alive, for the router and the JWKS route. */
  jwks(): Promise<{ keys: JWK[] }>;
  /** Makes a new key the signer and retires the others (their tokens stay verifiable until they expire). */
  rotate(): Promise<void>;
}

async function newKey(db: Db, sealer: Sealer): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair(algorithm, { extractable: true });
  const kid = randomBytes(12).toString("base64url");
  const [privateJwk, publicJwk] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
  await db.transaction(async (tx) => {
    await tx.query(`UPDATE identity.signing_keys SET retired_at = now() WHERE retired_at IS NULL`);
    await tx.query(`INSERT INTO identity.signing_keys (kid, algorithm, sealed_private_jwk, public_jwk) VALUES ($1, $2, $3, $4)`, [
      kid,
      algorithm,
      sealer.seal(JSON.stringify({ ...privateJwk, kid, alg: algorithm }), sealContext(kid)),
      JSON.stringify({ ...publicJwk, kid, alg: algorithm, use: "sig" }),
    ]);
  });
}

/**
 * Earlier versions stored private keys in plain text: seal each one in place. Idempotent and safe with
 * several replicas starting at once (a row another replica sealed first is left alone).
 */
async function sealPlainKeys(db: Db, sealer: Sealer): Promise<number> {
  const plain = await db.query<{ kid: string; private_jwk: JWK }>(`SELECT kid, private_jwk FROM identity.signing_keys WHERE private_jwk IS NOT NULL`);
  for (const row of plain) {
    await db.query(`UPDATE identity.signing_keys SET sealed_private_jwk = $2, private_jwk = NULL WHERE kid = $1 AND private_jwk IS NOT NULL`, [
      row.kid,
      sealer.seal(JSON.stringify(row.private_jwk), sealContext(row.kid)),
    ]);
  }
  return plain.length;
}

/** Without a secret nothing can be sealed, so, as with provider keys, no private key is stored at all. */
const noSecret = () => new Error("access tokens cannot be signed: SWITCHYARD_ENCRYPTION_KEY is not set");

/**
 * Identity's access-token keys: ES256, kept in its database so every replica signs with the same current
 * key and publishes the same set. A new key is made on first start and every 30 days. Private keys are
 * stored sealed with the deployment's encryption secret (`sealer`); without one, tokens already issued
 * stay verifiable (the public keys are published as before) but no new ones are signed.
 */
export async function startAccessTokens(db: Db, logger: Logger, sealer: Sealer | undefined): Promise<AccessTokens> {
  let signer: { kid: string; key: Awaited<ReturnType<typeof importJWK>> } | undefined;

  /**
   * The newest key, read for every token (one indexed row; exchanges are few): a rotation by another replica,
   * or a key an operator deleted after a compromise, takes effect with the next token. The private key is
   * opened again only when the kid changes.
   */
  const current = async (keys: Sealer) => {
    const newest = async () =>
      (
        await db.query<SigningKeyRow>(
          `SELECT kid, sealed_private_jwk, created_at FROM identity.signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1`,
        )
      )[0];
    let row = await newest();
    // A key still in plain text here was written by a replica of an earlier version: replace it.
    if (!row?.sealed_private_jwk || Date.now() - row.created_at.getTime() > rotateAfterMs) {
      await newKey(db, keys);
      logger.info("new access-token signing key");
      row = await newest();
    }
    if (signer?.kid === row!.kid) return signer;
    const privateJwk = JSON.parse(keys.open(row!.sealed_private_jwk!, sealContext(row!.kid))) as JWK;
    signer = { kid: row!.kid, key: await importJWK(privateJwk, algorithm) };
    return signer;
  };

  if (sealer) {
    const sealed = await sealPlainKeys(db, sealer);
    if (sealed > 0) logger.info({ sealed }, "access-token signing keys stored in plain text were sealed");
    await current(sealer);
  } else {
    logger.warn("SWITCHYARD_ENCRYPTION_KEY is not set: access tokens are not issued (token exchange answers server_error)");
  }

  return {
    canSign: sealer !== undefined,
    async issue(claims, expiresIn) {
      if (!sealer) throw noSecret();
      const { kid, key } = await current(sealer);
      return new SignJWT({ ...claims })
        .setProtectedHeader({ alg: algorithm, kid, typ: "at+jwt" })
        .setIssuer(accessTokenIssuer)
        .setAudience(accessTokenAudience)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
        .setJti(randomUUID())
        .sign(key);
    },
    async jwks() {
      const rows = await db.query<{ public_jwk: JWK }>(
        `SELECT public_jwk FROM identity.signing_keys
         WHERE retired_at IS NULL OR retired_at > now() - make_interval(secs => $1::double precision / 1000) ORDER BY created_at DESC`,
        [publishedAfterRetirementMs],
      );
      return { keys: rows.map((r) => r.public_jwk) };
    },
    async rotate() {
      if (!sealer) throw noSecret();
      await newKey(db, sealer);
      signer = undefined;
    },
  };
}
