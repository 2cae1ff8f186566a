import type { KeyAuthentication } from "@switchyard/contracts";
import { classifySecret, hashSecret, HttpError, ServiceUnavailableError, unauthorized } from "@switchyard/runtime";
import { createAccessTokenVerifier, looksLikeJwt } from "./access-tokens.js";
import type { IdentityClient } from "./identity-client.js";

export interface AuthenticatorOptions {
  identity: IdentityClient;
  /** How long a looked-up key is trusted without asking again; events drop entries sooner. */
  ttlMs: number;
  /** How long an unknown key is remembered as unknown (floods of bad keys never reach the database). */
  negativeTtlMs: number;
  /** How long a federation policy's state is trusted: a disabled or deleted policy's tokens stop within it. */
  policyTtlMs?: number;
  now?: () => number;
}

export interface AuthenticatedKey {
  hash: string;
  organizationId: string;
  workspaceId: string;
  management: boolean;
  rateLimitPerMinute: number | null;
}

/** Identity could not be asked: the caller should retry, not think its credential is bad. */
async function unavailableOnOutage<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (error instanceof ServiceUnavailableError) throw Object.assign(new HttpError("unavailable", "Authentication is temporarily unavailable"), { cause: error });
    throw error;
  }
}

/** One body for unknown and malformed keys: a caller cannot tell which it sent. */
const invalidKey = () => unauthorized("Invalid API key");

interface Entry {
  key: KeyAuthentication | undefined;
  until: number;
}

/** Bearer secret → key, with a short cache that `identity.api_key.*` events invalidate. */
export function createAuthenticator(options: AuthenticatorOptions) {
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();
  const pending = new Map<string, Promise<KeyAuthentication | undefined>>();
  let invalidations = 0;
  const verifyAccessToken = createAccessTokenVerifier(() => options.identity.accessTokenKeys(), now);
  const policies = new Map<string, { active: Promise<boolean>; until: number }>();
  /** Whether the policy an access token names still lets it act, asked at most once per `policyTtlMs`. */
  const policyActive = (id: string): Promise<boolean> => {
    const hit = policies.get(id);
    if (hit && hit.until > now()) return hit.active;
    const active = options.identity.policyActive(id);
    if (policies.size > 10_000) policies.clear();
    policies.set(id, { active, until: now() + (options.policyTtlMs ?? 5000) });
    active.catch(() => policies.delete(id));
    return active;
  };

  const cached = (hash: string): Entry | undefined => {
    const hit = cache.get(hash);
    return hit && hit.until > now() ? hit : undefined;
  };

  /** Asks identity for a key that is not cached, once however many requests wait for it. */
  async function lookup(hash: string): Promise<KeyAuthentication | undefined> {
    let inFlight = pending.get(hash);
    if (!inFlight) {
      const generation = invalidations;
      inFlight = options.identity.authenticate(hash).finally(() => pending.delete(hash));
      pending.set(hash, inFlight);
      const key = await inFlight;
      // An invalidation that arrived while we asked means our answer may already be stale.
      if (generation === invalidations) {
        if (cache.size > 100_000) cache.clear();
        cache.set(hash, { key, until: now() + (key ? options.ttlMs : options.negativeTtlMs) });
      }
      return key;
    }
    return inFlight;
  }

  return {
    async authenticate(authorization: string | undefined): Promise<AuthenticatedKey> {
      if (!authorization) throw unauthorized("Missing Authentication header");
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!match?.[1]) throw unauthorized("Missing Authentication header");
      const secret = match[1];
      let hash: string;
      let viaAccessToken = false;
      if (looksLikeJwt(secret)) {
        // An access token from the token exchange acts as its target key: that key's state, limits, usage.
        const claims = await unavailableOnOutage(() => verifyAccessToken(secret));
        if (!claims) throw unauthorized("Invalid or expired access token");
        if (!(await unavailableOnOutage(() => policyActive(claims.pol)))) throw unauthorized("The federation policy of this access token is disabled or deleted");
        hash = claims.sub;
        viaAccessToken = true;
      } else {
        hash = hashSecret(secret);
      }
      const hit = cached(hash);
      // A mistyped Switchyard key fails its checksum before identity is asked; a cached key passed it before.
      if (!hit && !viaAccessToken && classifySecret(secret) === "malformed") throw invalidKey();
      const key = hit ? hit.key : await unavailableOnOutage(() => lookup(hash));
      if (!key) throw invalidKey();
      if (key.disabled) throw unauthorized("API key is disabled");
      if (key.expires_at && Date.parse(key.expires_at) <= now()) throw unauthorized("API key has expired");
      if (viaAccessToken && key.is_management_key) throw invalidKey();
      return {
        hash: key.hash,
        organizationId: key.organization_id,
        workspaceId: key.workspace_id,
        management: key.is_management_key,
        rateLimitPerMinute: key.rate_limit_per_minute,
      };
    },
    /** Drops one key (an event said it changed) so the next request asks identity again. */
    invalidate(hash: string): void {
      invalidations++;
      cache.delete(hash);
    },
    clear(): void {
      invalidations++;
      cache.clear();
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
