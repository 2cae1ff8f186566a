import { z } from "zod";
import { isoTimestamp, uuid } from "./common.js";

/** A provider of the operator's catalog, by its slug: a workspace may bring its own key for each. */
export const providerKeySlug = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "must be a provider slug of the catalog");

/** `PUT` and `DELETE /workspaces/{id}/provider-keys/{provider}`. */
export const providerKeyParams = z.object({ id: uuid, provider: providerKeySlug });

/**
 * `PUT /workspaces/{id}/provider-keys/{provider}`: the workspace's own key (BYOK), sealed at rest. It goes to
 * the provider in a header, so only visible ASCII is taken: another character would fail every request
 * that sends it, or leave them all to the operator's key.
 */
export const putProviderKeyBody = z.strictObject({
  key: z
    .string()
    .min(8, "must be a provider API key")
    .max(512)
    .regex(/^[\x21-\x7e]+$/, "must be visible ASCII characters (no spaces), as an HTTP header carries it"),
  operator_fallback: z
    .boolean()
    .default(true)
    .describe("When the workspace's key fails (refused, rate-limited, down), the request may go on with the operator's key"),
});

/** A workspace's key for one provider, by label only: the key itself never leaves identity. */
export const providerKeySummary = z.object({
  provider: z.string(),
  label: z.string().describe("The key's last four characters"),
  operator_fallback: z.boolean(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export type ProviderKeySummary = z.infer<typeof providerKeySummary>;

export const providerKeyResponse = z.object({ data: providerKeySummary });
export const listProviderKeysResponse = z.object({ data: z.array(providerKeySummary) });
export const deleteProviderKeyResponse = z.object({ deleted: z.literal(true) });
export type DeleteProviderKeyResponse = z.infer<typeof deleteProviderKeyResponse>;
