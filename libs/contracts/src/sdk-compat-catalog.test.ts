import {
  BulkAssignKeysResponse$inboundSchema,
  BulkUnassignKeysResponse$inboundSchema,
  CreateGuardrailResponse$inboundSchema,
  DeleteGuardrailResponse$inboundSchema,
  GenerationResponse$inboundSchema,
  GetGuardrailResponse$inboundSchema,
  GetPresetResponse$inboundSchema,
  GetPresetVersionResponse$inboundSchema,
  ImageModelEndpointsResponse$inboundSchema,
  ImageModelsListResponse$inboundSchema,
  ListGuardrailsResponse$inboundSchema,
  ListKeyAssignmentsResponse$inboundSchema,
  ListPresetsResponse$inboundSchema,
  ListPresetVersionsResponse$inboundSchema,
  ModelResponse$inboundSchema,
  ModelsCountResponse$inboundSchema,
  ModelsListResponse$inboundSchema,
} from "@openrouter/sdk/models";
import { ListEndpointsResponse$inboundSchema, ListEndpointsZdrResponse$inboundSchema, ListProvidersResponse$inboundSchema } from "@openrouter/sdk/models/operations";
import { describe, expect, it } from "vitest";
import { issuePaths, expectBothAccept } from "../../../tests/support/schema-checks.js";
import { generationResponse, type Generation } from "./generation.js";
import {
  assignKeysResponse,
  deleteGuardrailResponse,
  guardrailResponse,
  listGuardrailsResponse,
  listKeyAssignmentsResponse,
  unassignKeysResponse,
  type Guardrail,
} from "./guardrails.js";
import { imageModelEndpointsResponse, listImageModelsResponse, type ImageEndpoint, type ImageModelListItem } from "./image-models.js";
import { listZdrEndpointsResponse, modelEndpointsResponse, type ModelEndpoints } from "./model-endpoints.js";
import { listModelsResponse, modelResponse, modelsCountResponse, type ListModelsResponse, type Model } from "./models.js";
import { listPresetsResponse, listPresetVersionsResponse, presetResponse, presetVersionResponse, type PresetWithVersion } from "./presets.js";
import { listProvidersResponse, type ListProvidersResponse } from "./providers.js";

const at = "2026-01-01T00:00:00.000Z";
const workspaceId = "3f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c";

const model: Model = {
  id: "openai/gpt-4o-mini",
  canonical_slug: "openai/gpt-4o-mini-2024-07-18",
  name: "OpenAI: GPT-4o mini",
  created: 1_721_260_800,
  description: "Small and fast.",
  context_length: 128_000,
  architecture: { input_modalities: ["text", "image"], output_modalities: ["text"], modality: "text+image->text", tokenizer: "GPT", instruct_type: null },
  pricing: { prompt: "0.00000015", completion: "0.0000006", image: "0", request: "0" },
  top_provider: { context_length: 128_000, is_moderated: true, max_completion_tokens: 16_384 },
  supported_parameters: ["temperature", "tools", "seed"],
  links: { details: "/api/v1/models/openai/gpt-4o-mini/endpoints" },
  default_parameters: null,
  expiration_date: null,
  knowledge_cutoff: null,
  per_request_limits: null,
  supported_voices: null,
};
const modelPage: ListModelsResponse = { data: [model], total_count: 3, links: { next: "/api/v1/models/user?offset=1&limit=1" } };

const endpoints: { data: ModelEndpoints } = {
  data: {
    id: model.id,
    name: model.name,
    created: model.created,
    description: model.description,
    architecture: { ...model.architecture },
    endpoints: [
      {
        name: "OpenAI | openai/gpt-4o-mini",
        model_id: model.id,
        model_name: model.name,
        provider_name: "OpenAI",
        tag: "openai",
        context_length: 128_000,
        max_completion_tokens: 16_384,
        max_prompt_tokens: null,
        pricing: { prompt: "0.00000015", completion: "0.0000006", request: "0", image: "0" },
        quantization: null,
        status: 0,
        supported_parameters: ["temperature"],
        supports_implicit_caching: true,
        supports_tool_choice: { auto: true, function: true, none: true, required: true },
        latency_last_30m: null,
        throughput_last_30m: { p50: 80, p75: 70, p90: 60, p99: 40 },
        uptime_last_5m: 1,
        uptime_last_30m: 0.99,
        uptime_last_1d: null,
      },
    ],
  },
};
const imageEndpoint: ImageEndpoint = {
  provider_name: "OpenAI",
  provider_slug: "openai",
  provider_tag: "openai",
  pricing: [
    { billable: "output_image", cost_usd: 0.04, unit: "image" },
    { billable: "input_text", cost_usd: 0.000005, unit: "token" },
  ],
  supported_parameters: {
    n: { type: "range", min: 1, max: 10 },
    resolution: { type: "enum", values: ["1K"] },
    size: { type: "boolean" },
  },
  supports_streaming: true,
  allowed_passthrough_parameters: [],
};
const imageModel: ImageModelListItem = {
  id: "openai/gpt-image-1",
  name: "OpenAI: GPT Image 1",
  description: "",
  created: 1_745_366_400,
  architecture: { input_modalities: ["text", "image"], output_modalities: ["image"] },
  supported_parameters: imageEndpoint.supported_parameters,
  supports_streaming: true,
  endpoints: "/api/v1/images/models/openai/gpt-image-1/endpoints",
};

const providers: ListProvidersResponse = {
  data: [{ name: "OpenAI", slug: "openai", privacy_policy_url: "https://openai.com/policies/privacy-policy", terms_of_service_url: null }],
};

const preset: PresetWithVersion = {
  id: "0b5f6c3e-8a1d-4e2f-9b3c-4d5e6f7a8b9c",
  slug: "helpful",
  name: "Helpful",
  description: null,
  status: "active",
  status_updated_at: null,
  designated_version_id: "1c6a7d4f-9b2e-4f3a-8c4d-5e6f7a8b9c0d",
  workspace_id: workspaceId,
  creator_user_id: "user_1",
  created_at: at,
  updated_at: at,
  designated_version: {
    id: "1c6a7d4f-9b2e-4f3a-8c4d-5e6f7a8b9c0d",
    preset_id: "0b5f6c3e-8a1d-4e2f-9b3c-4d5e6f7a8b9c",
    version: 1,
    system_prompt: "Be helpful.",
    config: { model: "openai/gpt-4o", temperature: 0.7 },
    creator_id: "user_1",
    created_at: at,
    updated_at: at,
  },
};

const guardrail: Guardrail = {
  id: "5e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b",
  name: "EU only",
  description: "Budget and region",
  workspace_id: workspaceId,
  created_at: at,
  updated_at: null,
  limit_usd: 50,
  reset_interval: "monthly",
  include_byok_in_budgets: false,
  allowed_providers: ["openai"],
  ignored_providers: null,
  allowed_models: null,
  ignored_models: null,
  allowed_data_regions: null,
  enforce_zdr: null,
  enforce_zdr_anthropic: true,
  enforce_zdr_openai: true,
  enforce_zdr_google: true,
  enforce_zdr_xai: false,
  enforce_zdr_other: false,
  enable_free_model_publication: false,
  enable_free_model_training: false,
  enable_paid_model_training: false,
  content_filter_builtins: [{ slug: "email", label: "Email addresses", action: "redact" }],
  content_filters: null,
  disable_response_cache: false,
};

const generation: Generation = {
  id: "gen-1767225600-abc",
  upstream_id: "chatcmpl-1",
  request_id: "req_1",
  session_id: null,
  created_at: at,
  model: "openai/gpt-4o-mini",
  api_type: "completions",
  app_id: null,
  workspace_id: workspaceId,
  preset_id: null,
  origin: "",
  http_referer: null,
  user_agent: "curl/8",
  external_user: null,
  data_region: "global",
  router: null,
  provider_name: "OpenAI",
  provider_responses: [{ status: 200, provider_name: "OpenAI", latency: 420, is_byok: false }],
  service_tier: null,
  streamed: false,
  cancelled: false,
  finish_reason: "stop",
  native_finish_reason: "stop",
  is_byok: false,
  latency: 420,
  generation_time: 900,
  moderation_latency: null,
  tokens_prompt: 12,
  tokens_completion: 30,
  native_tokens_prompt: 12,
  native_tokens_completion: 30,
  native_tokens_completion_images: null,
  native_tokens_reasoning: 0,
  native_tokens_cached: 0,
  num_media_prompt: null,
  num_media_completion: null,
  num_input_audio_prompt: null,
  num_search_results: null,
  num_fetches: null,
  web_search_engine: null,
  usage: 0.0000198,
  total_cost: 0.0000198,
  cache_discount: null,
  upstream_inference_cost: null,
};

describe("catalog responses pass the SDK's validation", () => {
  it("models, model endpoints and providers", () => {
    expectBothAccept(listModelsResponse, ModelsListResponse$inboundSchema, modelPage);
    expectBothAccept(listModelsResponse, ModelsListResponse$inboundSchema, { data: [], total_count: 0, links: { next: null } });
    expectBothAccept(modelEndpointsResponse, ListEndpointsResponse$inboundSchema, endpoints);
    expectBothAccept(listProvidersResponse, ListProvidersResponse$inboundSchema, providers);
  });

  it("one model, the model count and the zero-data-retention endpoints", () => {
    expectBothAccept(modelResponse, ModelResponse$inboundSchema, { data: model });
    expectBothAccept(modelsCountResponse, ModelsCountResponse$inboundSchema, { data: { count: 3 } });
    expectBothAccept(listZdrEndpointsResponse, ListEndpointsZdrResponse$inboundSchema, { data: endpoints.data.endpoints });
    expectBothAccept(listZdrEndpointsResponse, ListEndpointsZdrResponse$inboundSchema, { data: [] });
  });

  it("image models and their endpoints", () => {
    expectBothAccept(listImageModelsResponse, ImageModelsListResponse$inboundSchema, { data: [imageModel] });
    const parsed = expectBothAccept(imageModelEndpointsResponse, ImageModelEndpointsResponse$inboundSchema, { id: imageModel.id, endpoints: [imageEndpoint] }) as {
      endpoints: Array<{ supportedParameters: Record<string, { type: string }> }>;
    };
    // Our descriptors are the SDK's known kinds, not its catch-all for unknown ones.
    expect(Object.values(parsed.endpoints[0]!.supportedParameters).map((d) => d.type)).toEqual(["range", "enum", "boolean"]);
  });

  it("presets and their versions", () => {
    expectBothAccept(presetResponse, GetPresetResponse$inboundSchema, { data: preset });
    const { designated_version: version, ...record } = preset;
    expectBothAccept(listPresetsResponse, ListPresetsResponse$inboundSchema, { data: [record], total_count: 1 });
    expectBothAccept(presetVersionResponse, GetPresetVersionResponse$inboundSchema, { data: version });
    expectBothAccept(listPresetVersionsResponse, ListPresetVersionsResponse$inboundSchema, { data: [version], total_count: 1 });
  });

  it("guardrails and key assignments", () => {
    const parsed = expectBothAccept(guardrailResponse, GetGuardrailResponse$inboundSchema, { data: guardrail }) as {
      data: { enforceZdrXai?: boolean | null };
    };
    expect(parsed.data.enforceZdrXai).toBe(false);
    expectBothAccept(guardrailResponse, CreateGuardrailResponse$inboundSchema, { data: guardrail });
    expectBothAccept(listGuardrailsResponse, ListGuardrailsResponse$inboundSchema, { data: [guardrail], total_count: 1 });
    expectBothAccept(deleteGuardrailResponse, DeleteGuardrailResponse$inboundSchema, { deleted: true });
    const assignment = { id: "ka_1", guardrail_id: guardrail.id, key_hash: "c".repeat(64), key_name: "ci", key_label: "sk-sy-v1-abc...", assigned_by: null, created_at: at };
    expectBothAccept(listKeyAssignmentsResponse, ListKeyAssignmentsResponse$inboundSchema, { data: [assignment], total_count: 1 });
    expectBothAccept(assignKeysResponse, BulkAssignKeysResponse$inboundSchema, { assigned_count: 2 });
    expectBothAccept(unassignKeysResponse, BulkUnassignKeysResponse$inboundSchema, { unassigned_count: 1 });
  });

  it("generation records", () => {
    expectBothAccept(generationResponse, GenerationResponse$inboundSchema, { data: generation });
  });
});

describe("catalog records reject drift at the field", () => {
  it.each([
    ["data.0.knowledge_cutoff", { data: [{ ...model, knowledge_cutoff: undefined }] }],
    ["data.0.supported_voices", { data: [{ ...model, supported_voices: undefined }] }],
    ["data.0.pricing.prompt", { data: [{ ...model, pricing: { ...model.pricing, prompt: 0.1 } }] }],
    ["data.0.pricing.request", { data: [{ ...model, pricing: { prompt: "0", completion: "0", image: "0" } }] }],
    ["data.0.id", { data: [{ ...model, id: "gpt-4o" }] }],
    ["data.0.architecture.modality", { data: [{ ...model, architecture: { ...model.architecture, modality: undefined } }] }],
    ["links.next", { links: {} }],
    ["total_count", { total_count: -1 }],
  ])("model page: %s", (field, patch) => {
    expect(issuePaths(listModelsResponse, { ...modelPage, ...patch })).toContain(field);
  });

  it.each([
    ["data.enforce_zdr_google", { enforce_zdr_google: null }],
    ["data.content_filter_builtins.0.action", { content_filter_builtins: [{ slug: "email", action: "erase" }] }],
    ["data.workspace_id", { workspace_id: "w" }],
    ["data.include_byok_in_budgets", { include_byok_in_budgets: undefined }],
  ])("guardrail: %s", (field, patch) => {
    expect(issuePaths(guardrailResponse, { data: { ...guardrail, ...patch } })).toContain(field);
  });

  it.each([
    ["data.designated_version", { designated_version: undefined }],
    ["data.designated_version.version", { designated_version: { ...preset.designated_version, version: 0 } }],
    ["data.designated_version.config.temperature", { designated_version: { ...preset.designated_version, config: { temperature: "hot" } } }],
    ["data.slug", { slug: "a b" }],
  ])("preset: %s", (field, patch) => {
    expect(issuePaths(presetResponse, { data: { ...preset, ...patch } })).toContain(field);
  });

  it.each([
    ["endpoints.0.pricing.0.cost_usd", { pricing: [{ billable: "output_image", cost_usd: "0.04", unit: "image" }] }],
    ["endpoints.0.supported_parameters.n.max", { supported_parameters: { n: { type: "range", min: 1 } } }],
    ["endpoints.0.supported_parameters.n.type", { supported_parameters: { n: { type: "list" } } }],
    ["endpoints.0.provider_tag", { provider_tag: undefined }],
  ])("image endpoint: %s", (field, patch) => {
    expect(issuePaths(imageModelEndpointsResponse, { id: imageModel.id, endpoints: [{ ...imageEndpoint, ...patch }] })).toContain(field);
  });

  it("model count", () => {
    expect(issuePaths(modelsCountResponse, { data: { count: 1.5 } })).toEqual(["data.count"]);
    expect(issuePaths(modelsCountResponse, { count: 1 })).toEqual(["data"]);
  });

  it("generation", () => {
    expect(issuePaths(generationResponse, { data: { ...generation, data_region: "mars" } })).toEqual(["data.data_region"]);
    expect(issuePaths(generationResponse, { data: { ...generation, total_cost: undefined } })).toEqual(["data.total_cost"]);
  });
});
