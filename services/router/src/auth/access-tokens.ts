import { accessTokenAudience, accessTokenClaims, accessTokenIssuer, maxAccessTokenSeconds, type AccessTokenClaims } from "@switchyard/contracts";
import { ServiceUnavailableError } from "@switchyard/runtime";
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet } from "jose";

/** A bearer credential shaped like a JWT (our keys never are): header.payload.signature. */
export const looksLikeJwt = (credential: string) => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(credential);

/**
 * A key set older than this is fetched again before it verifies a token, so a key identity stops publishing
 * (deleted, or retired past its hour) is refused within this long; it is also how soon a rotated key is known.
 */
const keySetTtlMs = 5_000;
/** While identity cannot be reached, the last key set it gave stays in use this long past its fetch. */
const keepLastSetMs = 60_000;
/** A token naming a key the set lacks fetches the set again at once, at most this often. */
const unknownKeyRefetchMs = 1_000;

/**
 * Verifies identity's access tokens without a call per request, against identity's published key set,
 * fetched again once it is five seconds old (by at most one request at a time, and, after a failure, not
 * before five more seconds), and at once for a token naming a key it lacks (at most once a second). Without
 * a set younger than a minute, verifying throws ServiceUnavailableError.
 */
export function createAccessTokenVerifier(fetchKeys: () => Promise<JSONWebKeySet>, now: () => number = Date.now) {
  let keys: ReturnType<typeof createLocalJWKSet> | undefined;
  let fetchedAt = -Infinity;
  let attemptedAt = -Infinity;
  let lastFailure: unknown;
  let fetching: Promise<void> | undefined;

  const refresh = () =>
    (fetching ??= (async () => {
      attemptedAt = now();
      try {
        // A malformed set fails here, like an unreachable identity, and the last good one stays.
        keys = createLocalJWKSet(await fetchKeys());
        fetchedAt = now();
        lastFailure = undefined;
      } catch (error) {
        lastFailure = error;
      }
    })().finally(() => (fetching = undefined)));

  /** The key set to verify with: fresh, or the last good one while identity cannot be reached. */
  async function currentKeys(): Promise<ReturnType<typeof createLocalJWKSet>> {
    if (now() - fetchedAt >= keySetTtlMs && (fetching || now() - attemptedAt >= keySetTtlMs)) await refresh();
    if (keys && now() - fetchedAt < keepLastSetMs) return keys;
    const reason = lastFailure instanceof Error ? lastFailure.message : String(lastFailure);
    throw Object.assign(new ServiceUnavailableError(`identity's access-token key set could not be fetched: ${reason}`), { cause: lastFailure });
  }

  const verifyWith = (token: string, set: ReturnType<typeof createLocalJWKSet>) =>
    jwtVerify(token, set, { issuer: accessTokenIssuer, audience: accessTokenAudience, algorithms: ["ES256"], typ: "at+jwt", requiredClaims: ["iat", "exp"], clockTolerance: 5 });

  /** The token's claims, or undefined when it is not one of ours or no longer valid. */
  return async function verify(token: string): Promise<AccessTokenClaims | undefined> {
    try {
      let result;
      try {
        result = await verifyWith(token, await currentKeys());
      } catch (error) {
        // A key not seen yet (identity rotated): the set is fetched again at once, at most once a second.
        if (!(error instanceof errors.JWKSNoMatchingKey) || now() - attemptedAt < unknownKeyRefetchMs) throw error;
        await refresh();
        result = await verifyWith(token, await currentKeys());
      }
      const { payload } = result;
      // Identity never issues a longer one: such a token was not made by the exchange.
      if (payload.exp! - payload.iat! > maxAccessTokenSeconds) return undefined;
      const claims = accessTokenClaims.safeParse(payload);
      return claims.success ? claims.data : undefined;
    } catch (error) {
      if (error instanceof errors.JOSEError) return undefined;
      throw error;
    }
  };
}
