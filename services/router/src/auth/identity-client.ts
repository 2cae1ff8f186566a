import { authenticateKeyResponse, policyActiveResponse, type KeyAuthentication } from "@switchyard/contracts";
import { createInternalClient, ServiceUnavailableError } from "@switchyard/runtime";
import type { JSONWebKeySet } from "jose";

/** How the router looks keys up: over HTTP in the many-process topology, by a call in standalone. */
export interface IdentityClient {
  authenticate(hash: string): Promise<KeyAuthentication | undefined>;
  /** Public keys of identity's access tokens. */
  accessTokenKeys(): Promise<JSONWebKeySet>;
  /** Whether the federation policy an access token names still lets its tokens act. */
  policyActive(id: string): Promise<boolean>;
}

/** Looks keys up on identity's internal route over a keep-alive pool. */
export function httpIdentityClient(baseUrl: string, serviceToken: () => Promise<string>): IdentityClient {
  const client = createInternalClient(baseUrl, serviceToken);
  return {
    authenticate: async (hash) => (await client.post("/internal/keys/authenticate", { hash }, authenticateKeyResponse))?.data,
    policyActive: async (id) => (await client.post("/internal/federation-policies/active", { id }, policyActiveResponse))?.active ?? false,
    async accessTokenKeys() {
      const res = await fetch(new URL("/api/v1/oauth/jwks", baseUrl), { signal: AbortSignal.timeout(5000) }).catch((error: unknown) => {
        throw new ServiceUnavailableError(error instanceof Error ? error.message : String(error));
      });
      if (!res.ok) throw new ServiceUnavailableError(`/api/v1/oauth/jwks answered ${res.status}`);
      return (await res.json()) as JSONWebKeySet;
    },
  };
}
