import { z } from "zod";

/**
 * Contracts of `/internal/...` routes between services. They are not part of the public API and are
 * reachable only with a service token signed by the deployment's internal secret.
 */
export const keyAuthentication = z.object({
  hash: z.string(),
  organization_id: z.string(),
  workspace_id: z.string(),
  disabled: z.boolean(),
  is_management_key: z.boolean(),
  expires_at: z.string().nullable(),
  rate_limit_per_minute: z.number().int().nullable(),
});
export type KeyAuthentication = z.infer<typeof keyAuthentication>;

export const authenticateKeyBody = z.object({ hash: z.string().regex(/^[0-9a-f]{64}$/) });
export const authenticateKeyResponse = z.object({ data: keyAuthentication });
