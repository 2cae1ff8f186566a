import { randomBytes, randomUUID } from "node:crypto";
import { accessTokenAudience, accessTokenIssuer, type AccessTokenClaims } from "@switchyard/contracts";
import type { Db, Logger } from "@switchyard/runtime";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from "jose";

const algorithm = "ES256";
/** A signing key signs for this long, then a new one takes over. */
const rotateAfterMs = 30 * 86_400_000;
/** A retired key stays published this long: past the longest-lived token it signed (15 minutes). */
const publishedAfterRetirementMs = 3_600_000;

interface SigningKeyRow {
  kid: string;
  private_jwk: JWK;
  public_jwk: JWK;
  created_at: Date;
}

export interface AccessTokens {
  /** Signs an access token acting as `claims.sub` (the target key's hash) for `expiresIn` seconds. */
  issue(claims: Omit<AccessTokenClaims, "jti">, expiresIn: number): Promise<string>;
  /** Public keys of every key whose tokens may still be alive, for the router and the JWKS route. */
  jwks(): Promise<{ keys: JWK[] }>;
  /** Makes a new key the signer and retires the others (their tokens stay verifiable until they expire). */
  rotate(): Promise<void>;
}

async function newKey(db: Db): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair(algorithm, { extractable: true });
  const kid = randomBytes(12).toString("base64url");
  const [privateJwk, publicJwk] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
  await db.transaction(async (tx) => {
    await tx.query(`UPDATE identity.signing_keys SET retired_at = now() WHERE retired_at IS NULL`);
    await tx.query(`INSERT INTO identity.signing_keys (kid, algorithm, private_jwk, public_jwk) VALUES ($1, $2, $3, $4)`, [
      kid,
      algorithm,
      JSON.stringify({ ...privateJwk, kid, alg: algorithm }),
      JSON.stringify({ ...publicJwk, kid, alg: algorithm, use: "sig" }),
    ]);
  });
}

/**
 * Identity's access-token keys: ES256, kept in its database so every replica signs with the same current
 * key and publishes the same set. A new key is made on first start and every 30 days.
 */
export async function startAccessTokens(db: Db, logger: Logger): Promise<AccessTokens> {
  let signer: { kid: string; key: Awaited<ReturnType<typeof importJWK>>; loadedAt: number } | undefined;

  const current = async () => {
    // Re-read now and then, so a rotation by another replica is picked up.
    if (signer && Date.now() - signer.loadedAt < 60_000) return signer;
    const newest = async () =>
      (
        await db.query<SigningKeyRow>(
          `SELECT kid, private_jwk, public_jwk, created_at FROM identity.signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1`,
        )
      )[0];
    let row = await newest();
    if (!row || Date.now() - row.created_at.getTime() > rotateAfterMs) {
      await newKey(db);
      logger.info("new access-token signing key");
      row = await newest();
    }
    signer = { kid: row!.kid, key: await importJWK(row!.private_jwk, algorithm), loadedAt: Date.now() };
    return signer;
  };
  await current();

  return {
    async issue(claims, expiresIn) {
      const { kid, key } = await current();
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
      await newKey(db);
      signer = undefined;
    },
  };
}
