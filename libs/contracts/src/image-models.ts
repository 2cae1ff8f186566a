import { z } from "zod";

/**
 * What one request field of `POST /images` accepts at an endpoint, as OpenRouter's image discovery types
 * it: one of some values, a number in a range, or simply accepted. A field without a descriptor is not
 * supported there.
 */
export const imageCapability = z.discriminatedUnion("type", [
  z.object({ type: z.literal("enum"), values: z.array(z.string()) }),
  z.object({ type: z.literal("range"), min: z.number(), max: z.number() }),
  z.object({ type: z.literal("boolean") }),
]);
export type ImageCapability = z.infer<typeof imageCapability>;

/** Request field name → what it accepts. */
export const imageCapabilities = z.record(z.string(), imageCapability);
export type ImageCapabilities = z.infer<typeof imageCapabilities>;

/** One billable line of an image endpoint's price, in USD per unit. */
export const imagePricingEntry = z.object({
  billable: z.enum(["output_image", "input_image", "input_font", "input_reference", "input_text"]),
  cost_usd: z.number().min(0),
  unit: z.enum(["request", "image", "megapixel", "token"]),
  variant: z.string().optional(),
});
export type ImagePricingEntry = z.infer<typeof imagePricingEntry>;

/** One provider's offer of an image model. */
export const imageEndpoint = z.object({
  provider_name: z.string(),
  provider_slug: z.string(),
  provider_tag: z.string().nullable().describe("What provider.order/only/ignore take to pick this endpoint"),
  pricing: z.array(imagePricingEntry),
  supported_parameters: imageCapabilities,
  supports_streaming: z.boolean().describe("Native SSE streaming of partial images with stream: true"),
  allowed_passthrough_parameters: z
    .array(z.string())
    .describe("Switchyard passes provider.options[<slug>] on unchecked, so it names no allowlist here"),
});
export type ImageEndpoint = z.infer<typeof imageEndpoint>;

/** An image model in the discovery listing: what at least one of its endpoints accepts, and where their records are. */
export const imageModelListItem = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  created: z.number().int().describe("Unix timestamp"),
  architecture: z.object({ input_modalities: z.array(z.string()), output_modalities: z.array(z.string()) }),
  supported_parameters: imageCapabilities.describe("Union over the model's endpoints; each endpoint's own set is behind `endpoints`"),
  supports_streaming: z.boolean().describe("At least one of its endpoints streams natively"),
  endpoints: z.string().describe("Path of the model's endpoint records"),
});
export type ImageModelListItem = z.infer<typeof imageModelListItem>;

/** `GET /images/models`. */
export const listImageModelsResponse = z.object({ data: z.array(imageModelListItem) });
export type ListImageModelsResponse = z.infer<typeof listImageModelsResponse>;

/** `GET /images/models/{author}/{slug}/endpoints`: not wrapped in `data`, as OpenRouter answers it. */
export const imageModelEndpointsResponse = z.object({ id: z.string(), endpoints: z.array(imageEndpoint) });
export type ImageModelEndpointsResponse = z.infer<typeof imageModelEndpointsResponse>;
