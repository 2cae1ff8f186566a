import { accessTokenAudience, accessTokenIssuer } from "@switchyard/contracts";
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
  const sign = (overrides: Record<string, unknown> = {}, issuer = accessTokenIssuer) =>
    new SignJWT({ ...claims, ...overrides })
      .setProtectedHeader({ alg: "ES256", kid, typ: "at+jwt" })
      .setIssuer(issuer)
      .setAudience(accessTokenAudience)
      .setIssuedAt()
      .setExpirationTime("5m")
      .setJti("j")
      .sign(privateKey);
  return { jwk, sign };
}

describe("access tokens at the router", () => {
  it("verifies with the published keys, refetching for a rotated key at most every five seconds", async () => {
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
    clock = 1000; // too soon to ask again: the rotated key is not known yet
    expect(await verify(await second.sign())).toBeUndefined();
    clock = 6000;
    expect(await verify(await second.sign())).toMatchObject({ sub: claims.sub });
    expect(fetches).toBe(2);
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
