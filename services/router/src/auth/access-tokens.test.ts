import { accessTokenAudience, accessTokenIssuer } from "@switchyard/contracts";
import { ServiceUnavailableError } from "@switchyard/runtime";
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { createAccessTokenVerifier, looksLikeJwt } from "./access-tokens.js";

const claims = {
  sub: "a".repeat(64),
  org: "0b7e7a7e-5f58-4a55-9a35-2f7b2b9c1a01",
  ws: "0b7e7a7e-5f58-4a55-9a35-2f7b2b9c1a02",
  pol: "0b7e7a7e-5f58-4a55-9a35-2f7b2b9c1a03",
  scope: "inference",
  act: { iss: "https://issuer.example", sub: "repo:acme/app" },
};

async function signingKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const sign = (overrides: Record<string, unknown> = {}, issuer = accessTokenIssuer, lifetime: { iat?: number; exp?: number } = {}) => {
    const iat = lifetime.iat ?? Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({ ...claims, ...overrides })
      .setProtectedHeader({ alg: "ES256", kid, typ: "at+jwt" })
      .setIssuer(issuer)
      .setAudience(accessTokenAudience)
      .setExpirationTime(lifetime.exp ?? iat + 300)
      .setJti("j");
    return (lifetime.iat === undefined && lifetime.exp !== undefined ? jwt : jwt.setIssuedAt(iat)).sign(privateKey);
  };
  return { jwk, sign };
}

describe("access tokens at the router", () => {
  it("verifies with the published keys, fetching them at once for a rotated key, at most once a second", async () => {
    const first = await signingKey("k1");
    const second = await signingKey("k2");
    let published = [first.jwk];
    let fetches = 0;
    let clock = 0;
    const verify = createAccessTokenVerifier(async () => {
      fetches++;
      return { keys: published };
    }, () => clock);

    const token = await first.sign();
    expect(looksLikeJwt(token)).toBe(true);
    expect(await verify(token)).toMatchObject({ sub: claims.sub, scope: "inference" });
    published = [first.jwk, second.jwk];
    clock = 500; // too soon to ask again: the rotated key is not known yet
    expect(await verify(await second.sign())).toBeUndefined();
    clock = 1500; // before the set is five seconds old, a key it lacks fetches it again
    expect(await verify(await second.sign())).toMatchObject({ sub: claims.sub });
    expect(fetches).toBe(2);
  });

  it("stops accepting a key identity no longer publishes within five seconds", async () => {
    const key = await signingKey("k1");
    let published = [key.jwk];
    let clock = 0;
    const verify = createAccessTokenVerifier(async () => ({ keys: published }), () => clock);
    const token = await key.sign();
    expect(await verify(token)).toMatchObject({ sub: claims.sub });
    published = []; // deleted after a compromise, or retired past its hour of publication
    clock = 4_000;
    expect(await verify(token)).toMatchObject({ sub: claims.sub });
    clock = 5_000;
    expect(await verify(token)).toBeUndefined();
  });

  it("keeps its last key set for a minute while identity cannot be reached, asking at most every five seconds", async () => {
    const key = await signingKey("k1");
    let down = false;
    let fetches = 0;
    let clock = 0;
    const verify = createAccessTokenVerifier(async () => {
      fetches++;
      if (down) throw new ServiceUnavailableError("identity is down");
      return { keys: [key.jwk] };
    }, () => clock);
    const token = await key.sign();
    expect(await verify(token)).toMatchObject({ sub: claims.sub });
    down = true;
    clock = 6_000;
    expect(await verify(token)).toMatchObject({ sub: claims.sub });
    clock = 8_000;
    expect(await verify(token)).toMatchObject({ sub: claims.sub });
    expect(fetches).toBe(2);
    clock = 60_000;
    await expect(verify(token)).rejects.toBeInstanceOf(ServiceUnavailableError);
    down = false;
    clock = 66_000;
    expect(await verify(token)).toMatchObject({ sub: claims.sub });
  });

  it("answers unavailable, not invalid, when identity's key set was never fetched", async () => {
    const verify = createAccessTokenVerifier(async () => {
      throw new Error("connection refused");
    });
    const token = await (await signingKey("k1")).sign();
    await expect(verify(token)).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it("refuses a token that lives longer than the 900 seconds identity issues, or does not say when it was issued", async () => {
    const key = await signingKey("k1");
    const verify = createAccessTokenVerifier(async () => ({ keys: [key.jwk] }));
    const iat = Math.floor(Date.now() / 1000) - 60;
    expect(await verify(await key.sign({}, accessTokenIssuer, { iat, exp: iat + 900 }))).toMatchObject({ sub: claims.sub });
    expect(await verify(await key.sign({}, accessTokenIssuer, { iat, exp: iat + 901 }))).toBeUndefined();
    expect(await verify(await key.sign({}, accessTokenIssuer, { exp: iat + 300 }))).toBeUndefined();
  });

  it("refuses tokens of another issuer, with other claims, or tampered with", async () => {
    const key = await signingKey("k1");
    const verify = createAccessTokenVerifier(async () => ({ keys: [key.jwk] }));
    expect(await verify(await key.sign({}, "someone-else"))).toBeUndefined();
    expect(await verify(await key.sign({ scope: "admin" }))).toBeUndefined();
    const token = await key.sign();
    expect(await verify(`${token.slice(0, -4)}AAAA`)).toBeUndefined();
    expect(looksLikeJwt("sk-sy-v1-0123")).toBe(false);
  });
});
