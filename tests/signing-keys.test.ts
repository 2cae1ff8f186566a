import { randomBytes, randomUUID } from "node:crypto";
import { accessTokenAudience, accessTokenIssuer } from "@switchyard/contracts";
import { migrate, openDatabase, silentLogger, type Db } from "@switchyard/runtime";
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { migrations, schema } from "../services/identity/src/migrations.js";
import { createSealer } from "../services/identity/src/provider-keys/sealed.js";
import { startAccessTokens, type AccessTokens } from "../services/identity/src/federation/access-tokens.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

/** Identity's signing keys on a real database: Postgres when DATABASE_URL is set, else PGlite. */

const secret = "access-token-test-encryption-secret-0123456789";
const claims = {
  sub: "a".repeat(64),
  org: randomUUID(),
  ws: randomUUID(),
  pol: randomUUID(),
  scope: "inference" as const,
  act: { iss: "https://issuer.example", sub: "repo:acme/app" },
};

let db: Db | undefined;
const made: TestDatabase[] = [];
afterEach(async () => {
  await db?.close();
  db = undefined;
  await Promise.all(made.splice(0).map((d) => d.drop()));
});

async function freshDatabase(): Promise<Db> {
  const database = await createTestDatabase();
  made.push(database);
  return openDatabase({ url: database.url });
}

async function verify(tokens: AccessTokens, token: string) {
  const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(await tokens.jwks()), { issuer: accessTokenIssuer, audience: accessTokenAudience });
  return { payload, kid: protectedHeader.kid };
}

interface StoredKey {
  kid: string;
  private_jwk: unknown;
  sealed_private_jwk: string | null;
}
const storedKeys = (on: Db) => on.query<StoredKey>(`SELECT kid, private_jwk, sealed_private_jwk FROM identity.signing_keys ORDER BY created_at`);

/** A database as the version before sealing left it: a signing key in plain text, and a token it signed. */
async function databaseWithPlainKey(): Promise<{ db: Db; kid: string; d: string; token: string }> {
  const legacy = await freshDatabase();
  const sealing = migrations.findIndex((m) => m.id === "006_sealed_signing_keys");
  await migrate(legacy, schema, migrations.slice(0, sealing));
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = randomBytes(12).toString("base64url");
  const [privateJwk, publicJwk] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
  await legacy.query(`INSERT INTO identity.signing_keys (kid, algorithm, private_jwk, public_jwk) VALUES ($1, 'ES256', $2, $3)`, [
    kid,
    JSON.stringify({ ...privateJwk, kid, alg: "ES256" }),
    JSON.stringify({ ...publicJwk, kid, alg: "ES256", use: "sig" }),
  ]);
  const token = await new SignJWT({ ...claims, jti: randomUUID() })
    .setProtectedHeader({ alg: "ES256", kid, typ: "at+jwt" })
    .setIssuer(accessTokenIssuer)
    .setAudience(accessTokenAudience)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(privateKey);
  await migrate(legacy, schema, migrations);
  return { db: legacy, kid, d: String(privateJwk.d), token };
}

// Generous: each test makes its own databases, which takes seconds on a loaded machine.
describe("access-token signing keys at rest", { timeout: 120_000 }, () => {
  it("are stored sealed with the encryption secret, never in plain text", async () => {
    db = await freshDatabase();
    await migrate(db, schema, migrations);
    const tokens = await startAccessTokens(db, silentLogger(), createSealer(secret));
    const token = await tokens.issue(claims, 60);
    const [stored] = await storedKeys(db);
    expect(stored?.private_jwk).toBeNull();
    expect(stored?.sealed_private_jwk).toEqual(expect.any(String));
    expect(stored?.sealed_private_jwk).not.toMatch(/"d"|"kty"/);
    expect(() => createSealer("another-secret-of-at-least-32-characters").open(stored!.sealed_private_jwk!, `access-token signing key\0${stored!.kid}`)).toThrow();
    expect((await verify(tokens, token)).kid).toBe(stored?.kid);
    expect((await tokens.jwks()).keys[0]).not.toHaveProperty("d");
  });

  it("seals a plain-text key from an earlier version on start; its tokens stay valid and it keeps signing", async () => {
    const legacy = await databaseWithPlainKey();
    db = legacy.db;
    const tokens = await startAccessTokens(db, silentLogger(), createSealer(secret));
    const [stored, ...others] = await storedKeys(db);
    expect(others).toEqual([]);
    expect(stored).toMatchObject({ kid: legacy.kid, private_jwk: null });
    expect(stored?.sealed_private_jwk).not.toContain(legacy.d);
    expect((await verify(tokens, legacy.token)).kid).toBe(legacy.kid);
    expect((await verify(tokens, await tokens.issue(claims, 60))).kid).toBe(legacy.kid);
    // A second start (another replica) finds nothing left to seal and the same key.
    const again = await startAccessTokens(db, silentLogger(), createSealer(secret));
    expect((await verify(again, await again.issue(claims, 60))).kid).toBe(legacy.kid);
  });

  it("without an encryption secret stores no private key and signs nothing, but keeps earlier tokens verifiable", async () => {
    db = await freshDatabase();
    await migrate(db, schema, migrations);
    const fresh = await startAccessTokens(db, silentLogger(), undefined);
    expect(fresh.canSign).toBe(false);
    await expect(fresh.issue(claims, 60)).rejects.toThrow(/SWITCHYARD_ENCRYPTION_KEY/);
    expect(await storedKeys(db)).toEqual([]);
    await db.close();

    const legacy = await databaseWithPlainKey();
    db = legacy.db;
    const tokens = await startAccessTokens(db, silentLogger(), undefined);
    await expect(tokens.issue(claims, 60)).rejects.toThrow(/SWITCHYARD_ENCRYPTION_KEY/);
    expect((await verify(tokens, legacy.token)).kid).toBe(legacy.kid);
  });
});
