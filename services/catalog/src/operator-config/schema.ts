import { z } from "zod";

/**
 * The operator's catalog file (`SWITCHYARD_CONFIG`, YAML or JSON): which providers exist, how to reach
 * them, and which models they serve at which prices. Secrets never live in the file: `api_key_env`
 * names the variable that holds a provider's key.
 */
const slug = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "must be a lower-case provider slug");
/** The dearest price a unit may have: a request's worst case (price × tokens × choices) must fit what identity holds. */
const highestPrice = 1000;

/**
 * USD per unit as a decimal string, e.g. "0.00000015" per token: at most 12 decimal places (the gateway counts
 * money in 1e-12 USD, and a finer price could not be charged) and at most `highestPrice`.
 */
const price = z
  .string()
  .regex(/^\d+(\.\d{1,12})?$/, "must be a non-negative decimal string with at most 12 decimal places, such as \"0.0000006\"")
  .refine((value) => Number(value) <= highestPrice, `must be at most ${highestPrice} USD per unit`);
const modality = z.enum(["text", "image", "file", "audio", "video", "embeddings", "rerank", "speech", "transcription"]);
/**
 * Where an endpoint processes data; requests on a regional hostname stay in that region. `us`, `europe` and
 * `global` are the regions guardrails can name in `allowed_data_regions`.
 */
const region = z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, "must be a lower-case region name such as eu or us");

export const providerConfig = z.strictObject({
  slug,
  name: z.string().min(1),
  /**
   * The wire format: chat speaks openai, anthropic and google; transcription openai and deepgram; images
   * openai and google; speech openai; embeddings openai, google, cohere and voyage; rerank cohere, voyage
   * and openai-compatible (the Jina-style `/rerank` of Jina and vLLM).
   */
  adapter: z.enum(["openai", "openai-compatible", "anthropic", "google", "deepgram", "cohere", "voyage"]),
  base_url: z.url(),
  /** Environment variable holding the key; `<SLUG>_API_KEY` is also read. */
  api_key_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/).optional(),
  /** A local server (Ollama, vLLM) may need no key; others are unusable without one. */
  requires_api_key: z.boolean().default(true),
  /**
   * An OpenAI-compatible router (OpenRouter) that passes reasoning sent back in `reasoning_details` on to the
   * providers behind it: signed and encrypted reasoning of every provider reaches it. Other endpoints of that
   * format get none of it.
   */
  relays_reasoning: z.boolean().default(false),
  data_policy: z
    .strictObject({
      training: z.boolean().default(false),
      retains_prompts: z.boolean().default(false),
      zdr: z.boolean().default(false),
      /** The provider may publish prompts sent to its free endpoints; guardrails exclude those unless they allow it. */
      publishes_free_prompts: z.boolean().default(false),
    })
    .default({ training: false, retains_prompts: false, zdr: false, publishes_free_prompts: false }),
  region: region.default("global"),
  privacy_policy_url: z.url().optional(),
  terms_of_service_url: z.url().optional(),
  status_page_url: z.url().optional(),
  headquarters: z.string().length(2).optional(),
});
export type ProviderConfig = z.infer<typeof providerConfig>;

/** Token prices that replace an endpoint's standard ones where they are set (a service tier's, a long prompt's). */
const tokenPrices = z.strictObject({
  prompt: price.optional(),
  completion: price.optional(),
  input_cache_read: price.optional(),
  input_cache_write: price.optional(),
  input_cache_write_1h: price.optional(),
  internal_reasoning: price.optional(),
});

export const endpointConfig = z.strictObject({
  provider: slug,
  /** The model's name at the provider, e.g. `gpt-4o-mini`. */
  upstream_model: z.string().min(1),
  pricing: z.strictObject({
    prompt: price,
    completion: price,
    request: price.default("0"),
    image: price.default("0"),
    input_cache_read: price.optional(),
    input_cache_write: price.optional(),
    /** Cache writes kept an hour (Anthropic's `ttl: "1h"`); without it they are priced at input_cache_write. */
    input_cache_write_1h: price.optional(),
    internal_reasoning: price.optional(),
    audio: price.optional(),
    /** Transcription: USD per second of audio. */
    audio_second: price.optional(),
    /** Image generation: USD per generated image (`image` is per input image). */
    image_output: price.optional(),
    web_search: price.optional(),
    /** Speech: USD per audio output token (token-priced voices such as gpt-4o-mini-tts). */
    audio_output: price.optional(),
    /** Speech: USD per character of input text (character-priced voices such as tts-1). */
    character: price.optional(),
    /** Rerank: USD per search unit, as Cohere bills (a query with up to 100 documents). */
    search_unit: price.optional(),
  }),
  /**
   * Prices of the provider's service tiers (`service_tier` on the request), each over `pricing`: an endpoint
   * serves a request for `flex`, `priority` (also `fast`) or `scale` only when it prices that tier.
   */
  service_tiers: z.partialRecord(z.enum(["flex", "priority", "scale"]), tokenPrices).optional(),
  /**
   * The provider's prices for a long prompt: a generation whose prompt is above `above_prompt_tokens`
   * tokens is charged them over `pricing` for all its tokens (a served tier's own prices apply over them).
   */
  long_context: z
    .strictObject({
      above_prompt_tokens: z.number().int().positive(),
      pricing: tokenPrices.refine((prices) => Object.values(prices).some((p) => p !== undefined), "must set at least one price"),
    })
    .optional(),
  context_length: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  /** Embeddings and rerank: the most inputs (documents) one request may carry; tokens per input are its context_length. */
  max_inputs: z.number().int().positive().optional(),
  supported_parameters: z.array(z.string().min(1)).default([]),
  quantization: z.string().optional(),
  /** Overrides the provider's region for this endpoint. */
  region: region.optional(),
  /** Overrides the provider's zero-data-retention policy for this endpoint. */
  zdr: z.boolean().optional(),
  is_moderated: z.boolean().default(false),
});
export type EndpointConfig = z.infer<typeof endpointConfig>;

export const modelConfig = z.strictObject({
  /** `<vendor>/<model>`, optionally with a `:free` suffix for a free variant listed as its own model. */
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/, "must be <vendor>/<model>"),
  name: z.string().min(1),
  description: z.string().default(""),
  /** When the model was released, as a date (YYYY-MM-DD). */
  created: z.iso.date().optional(),
  context_length: z.number().int().positive(),
  input_modalities: z.array(modality).min(1).default(["text"]),
  output_modalities: z.array(modality).min(1).default(["text"]),
  tokenizer: z.string().default("Other"),
  instruct_type: z.string().nullable().default(null),
  knowledge_cutoff: z.string().nullable().default(null),
  /** Its author allows training other models on its text output (`provider.enforce_distillable_text` keeps only these). */
  distillable: z.boolean().default(false),
  endpoints: z.array(endpointConfig).min(1),
});
export type ModelConfig = z.infer<typeof modelConfig>;

export const catalogConfig = z
  .strictObject({
    providers: z.array(providerConfig).min(1),
    models: z.array(modelConfig),
    /** Regional hostnames: a request on one of them sees only endpoints in that region. */
    regions: z.array(z.strictObject({ region, hosts: z.array(z.string().min(1)).min(1) })).default([]),
  })
  .superRefine((config, ctx) => {
    const slugs = new Set<string>();
    config.providers.forEach((p, i) => {
      if (slugs.has(p.slug)) ctx.addIssue({ code: "custom", path: ["providers", i, "slug"], message: `duplicate provider ${p.slug}` });
      slugs.add(p.slug);
    });
    const ids = new Set<string>();
    config.models.forEach((m, i) => {
      if (ids.has(m.id)) ctx.addIssue({ code: "custom", path: ["models", i, "id"], message: `duplicate model ${m.id}` });
      ids.add(m.id);
      m.endpoints.forEach((e, j) => {
        if (!slugs.has(e.provider)) {
          ctx.addIssue({ code: "custom", path: ["models", i, "endpoints", j, "provider"], message: `unknown provider ${e.provider}` });
        }
        const context = e.context_length ?? m.context_length;
        if (e.long_context && e.long_context.above_prompt_tokens >= context) {
          ctx.addIssue({ code: "custom", path: ["models", i, "endpoints", j, "long_context", "above_prompt_tokens"], message: `must be below the endpoint's context_length (${context})` });
        }
      });
    });
  });
export type CatalogConfigInput = z.input<typeof catalogConfig>;
export type CatalogConfig = z.output<typeof catalogConfig>;
