import { z } from "zod";

/** `GET /providers` item: the configured upstream providers, as OpenRouter lists its own. */
export const provider = z.object({
  name: z.string(),
  slug: z.string().describe("Provider slug used in routing preferences"),
  privacy_policy_url: z.string().nullable(),
  terms_of_service_url: z.string().nullable().optional(),
  status_page_url: z.string().nullable().optional(),
  headquarters: z.string().nullable().optional().describe("ISO 3166-1 alpha-2 country code"),
  datacenters: z.array(z.string()).nullable().optional(),
  has_api_key: z.boolean().optional().describe("Switchyard extension: the gateway holds an API key for this provider"),
  usable: z.boolean().optional().describe("Switchyard extension: requests can go to it (it has an API key, or needs none)"),
});
export type Provider = z.infer<typeof provider>;

export const listProvidersResponse = z.object({ data: z.array(provider) });
export type ListProvidersResponse = z.infer<typeof listProvidersResponse>;
