import { accessTokenAudience, accessTokenClaims, accessTokenIssuer, type AccessTokenClaims } from "@switchyard/contracts";
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet } from "jose";

/** A bearer credential shaped like a JWT (our keys never are): header.payload.signature. */
export const looksLikeJwt = (credential: string) => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(credential);

/** Fetches of the key set at most this often when a token names a key not seen yet (rotation). */
const refetchEveryMs = 5_000;

/**
 * Verifies identity's access tokens without a call per request: the key set is fetched once, and again
 * when a token names an unknown key (identity rotated), at most every five seconds.
 */
export function createAccessTokenVerifier(fetchKeys: () => Promise<JSONWebKeySet>, now: () => number = Date.now) {
  let keys: ReturnType<typeof createLocalJWKSet> | undefined;
  let fetchedAt = -Infinity;
  let fetching: Promise<void> | undefined;

  const refresh = () =>
    (fetching ??= fetchKeys()
      .then((set) => {
        keys = createLocalJWKSet(set);
        fetchedAt = now();
      })
      .finally(() => (fetching = undefined)));

  const verifyWith = (token: string) =>
    jwtVerify(token, keys!, { issuer: accessTokenIssuer, audience: accessTokenAudience, algorithms: ["ES256"], typ: "at+jwt", clockTolerance: 5 });

  /** The token's claims, or undefined when it is not one of ours or no longer valid. */
  return async function verify(token: string): Promise<AccessTokenClaims | undefined> {
    if (!keys) await refresh();
    try {
      let result;
      try {
        result = await verifyWith(token);
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey) || now() - fetchedAt < refetchEveryMs) throw error;
        await refresh();
        result = await verifyWith(token);
      }
      const claims = accessTokenClaims.safeParse(result.payload);
      return claims.success ? claims.data : undefined;
    } catch (error) {
      if (error instanceof errors.JOSEError) return undefined;
      throw error;
    }
  };
}
