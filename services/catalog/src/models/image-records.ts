import {
  imageAspectRatios,
  imageBackground,
  imageModeration,
  imageQuality,
  maxInputReferences,
  type ImageCapabilities,
  type ImageCapability,
  type ImageEndpoint,
  type ImageModelListItem,
  type ImagePricingEntry,
} from "@switchyard/contracts";
import { imageWireFormats, type ImageWireFormat } from "@switchyard/upstream";
import type { EndpointEntry, ModelEntry } from "./snapshot.js";

/** The endpoints media can generate images through: an image model's, on an adapter with an image wire format. */
export const imageEndpointsOf = (model: ModelEntry): EndpointEntry[] =>
  model.output_modalities.includes("image") ? model.endpointEntries.filter((e) => imageWireFormats[e.providerEntry.adapter] !== undefined) : [];

/** The `POST /images` fields a wire format accepts, as OpenRouter's typed descriptors. */
function capabilitiesOf(format: ImageWireFormat): ImageCapabilities {
  const capabilities: ImageCapabilities = {
    n: { type: "range", min: 1, max: format.maxImages },
    // Every ratio is accepted: a format that draws fewer shapes takes the nearest.
    aspect_ratio: { type: "enum", values: [...imageAspectRatios] },
    resolution: { type: "enum", values: [...format.resolutions] },
    size: { type: "boolean" },
    output_format: { type: "enum", values: [...format.outputFormats] },
  };
  if (format.references) capabilities.input_references = { type: "range", min: 0, max: maxInputReferences };
  if (format.moderation) capabilities.moderation = { type: "enum", values: [...imageModeration.options] };
  for (const field of format.honours) {
    if (field === "quality") capabilities.quality = { type: "enum", values: [...imageQuality.options] };
    if (field === "background") capabilities.background = { type: "enum", values: [...imageBackground.options] };
    if (field === "output_compression") capabilities.output_compression = { type: "range", min: 0, max: 100 };
    if (field === "seed") capabilities.seed = { type: "boolean" };
  }
  return capabilities;
}

/** Two descriptors of one field joined: every value either takes, the widest range. */
function widen(a: ImageCapability, b: ImageCapability): ImageCapability {
  if (a.type === "enum" && b.type === "enum") return { type: "enum", values: [...new Set([...a.values, ...b.values])] };
  if (a.type === "range" && b.type === "range") return { type: "range", min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) };
  return a;
}

/**
 * Catalog prices as billable lines: `image_output` per image made, `completion` per image token, `prompt`
 * per text token, `image` per reference image, `request` per request, as media charges them. Free lines
 * are left out.
 */
function pricingOf(e: EndpointEntry): ImagePricingEntry[] {
  const lines: Array<[string | undefined, ImagePricingEntry["billable"], ImagePricingEntry["unit"]]> = [
    [e.pricing.image_output, "output_image", "image"],
    [e.pricing.completion, "output_image", "token"],
    [e.pricing.prompt, "input_text", "token"],
    [e.pricing.image, "input_reference", "image"],
    [e.pricing.request, "output_image", "request"],
  ];
  return lines.filter(([price]) => Number(price ?? 0) > 0).map(([price, billable, unit]) => ({ billable, cost_usd: Number(price), unit }));
}

export function toImageEndpointRecord(e: EndpointEntry): ImageEndpoint {
  const format = imageWireFormats[e.providerEntry.adapter]!;
  return {
    provider_name: e.providerEntry.name,
    provider_slug: e.providerEntry.slug,
    provider_tag: e.providerEntry.slug,
    pricing: pricingOf(e),
    supported_parameters: capabilitiesOf(format),
    supports_streaming: format.streams,
    allowed_passthrough_parameters: [],
  };
}

/** A model's discovery entry: what at least one of the given endpoints accepts. */
export function toImageModelRecord(model: ModelEntry, endpoints: readonly EndpointEntry[]): ImageModelListItem {
  const supported: ImageCapabilities = {};
  let streams = false;
  for (const e of endpoints) {
    const format = imageWireFormats[e.providerEntry.adapter]!;
    streams ||= format.streams;
    for (const [field, capability] of Object.entries(capabilitiesOf(format))) {
      const seen = supported[field];
      supported[field] = seen ? widen(seen, capability) : capability;
    }
  }
  return {
    id: model.id,
    name: model.name,
    description: model.description,
    created: model.createdAt,
    architecture: { input_modalities: model.input_modalities, output_modalities: model.output_modalities },
    supported_parameters: supported,
    supports_streaming: streams,
    endpoints: `/api/v1/images/models/${model.id}/endpoints`,
  };
}
