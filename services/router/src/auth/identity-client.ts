import { authenticateKeyResponse, type KeyAuthentication } from "@switchyard/contracts";
import { createInternalClient } from "@switchyard/runtime";

/** How the router looks keys up: over HTTP in the many-process topology, by a call in standalone. */
export interface IdentityClient {
  authenticate(hash: string): Promise<KeyAuthentication | undefined>;
}

/** Looks keys up on identity's internal route over a keep-alive pool. */
export function httpIdentityClient(baseUrl: string, serviceToken: () => Promise<string>): IdentityClient {
  const client = createInternalClient(baseUrl, serviceToken);
  return {
    authenticate: async (hash) => (await client.post("/internal/keys/authenticate", { hash }, authenticateKeyResponse))?.data,
  };
}
