import { ChatRequest$outboundSchema } from "@openrouter/sdk/models";
import { describe, expect, it } from "vitest";
import { issuePaths } from "../../../tests/support/schema-checks.js";
import { chatCompletionRequest, metadataHeaderValue, type ChatCompletionRequestInput } from "./chat-request.js";

const minimal = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] };

/** Every named and by-purpose parameter of the spec, at legal values. */
const full: ChatCompletionRequestInput = {
  model: "openai/gpt-4o",
  models: ["anthropic/claude-sonnet-4.6", "openai/gpt-4o-mini:free"],
  route: "fallback",
  messages: [
    { role: "system", content: "Be brief.", name: "policy" },
    { role: "developer", content: [{ type: "text", text: "Use JSON." }] },
    {
      role: "user",
      content: [
        { type: "text", text: "What is this?", cache_control: { type: "ephemeral", ttl: "1h" } },
        { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "high" } },
        { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
        { type: "file", file: { filename: "a.pdf", file_data: "data:application/pdf;base64,JVBERi0=" } },
      ],
    },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "call_1", content: "42" },
  ],
  max_tokens: 16,
  max_completion_tokens: 1024,
  temperature: 2,
  top_p: 1,
  top_k: 1,
  top_a: 0,
  min_p: 0.1,
  frequency_penalty: -2,
  presence_penalty: 2,
  repetition_penalty: 2,
  logit_bias: { "50256": -100 },
  logprobs: true,
  top_logprobs: 20,
  seed: 42,
  stop: ["a", "b", "c", "d"],
  stream: true,
  stream_options: { include_usage: true },
  metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`.padEnd(64, "x"), "v".repeat(512)])),
  session_id: "s".repeat(256),
  reasoning: { effort: "high", summary: "concise" },
  reasoning_effort: "high",
  max_tool_calls: 5,
  stop_server_tools_when: [
    { type: "step_count_is", step_count: 3 },
    { type: "max_cost", max_cost_in_dollars: 0.5 },
  ],
  service_tier: "fast",
  provider: {
    order: ["openai", "azure"],
    allow_fallbacks: false,
    only: ["openai"],
    ignore: ["deepinfra"],
    require_parameters: true,
    data_collection: "deny",
    zdr: true,
    quantizations: ["fp8"],
    sort: { by: "price", partition: "none" },
    max_price: { prompt: "0.000001", completion: "0.000002" },
  },
  response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } },
  prediction: { type: "content", content: "draft" },
  modalities: ["text", "image"],
  image_config: { aspect_ratio: "16:9", quality: "high" },
  tools: [
    { type: "function", function: { name: "lookup", description: "Find", parameters: { type: "object", properties: {} } } },
    { type: "openrouter:web_search", parameters: { max_results: 3 } },
  ],
  tool_choice: { type: "function", function: { name: "lookup" } },
  parallel_tool_calls: true,
  plugins: [{ id: "auto-router", enabled: true, allowed_models: ["openai/*"], cost_tier: "low", pin_model: false }],
  cache_control: { type: "ephemeral" },
  prompt_cache_key: "conv-1",
  prompt_cache_options: { mode: "explicit", ttl: "1h" },
  debug: { echo_upstream_body: true },
  trace: { trace_id: "t1", trace_name: "n", span_name: "s", generation_name: "g", parent_span_id: "p", team: "core" },
  user: "user-123",
};

describe("POST /chat/completions body", () => {
  it("accepts a minimal request and one with every parameter", () => {
    expect(issuePaths(chatCompletionRequest, minimal)).toEqual([]);
    expect(issuePaths(chatCompletionRequest, full)).toEqual([]);
    expect(chatCompletionRequest.parse(minimal).stream).toBe(false);
  });

  it("passes unknown top-level fields through to the provider", () => {
    const parsed = chatCompletionRequest.parse({ ...minimal, verbosity: "low", web_search_options: { search_context_size: "low" } });
    expect(parsed).toMatchObject({ verbosity: "low", web_search_options: { search_context_size: "low" } });
  });

  it("accepts null for every nullable knob, as the SDK may send it", () => {
    const nulls = Object.fromEntries(
      ["temperature", "top_p", "top_k", "top_a", "min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
        "logit_bias", "logprobs", "top_logprobs", "seed", "stop", "max_tokens", "max_completion_tokens", "service_tier",
        "reasoning_effort", "route", "provider", "prediction", "parallel_tool_calls", "stream_options"].map((key) => [key, null]),
    );
    expect(issuePaths(chatCompletionRequest, { ...minimal, ...nulls })).toEqual([]);
  });

  it("accepts a request serialized by the OpenRouter SDK", () => {
    const wire = ChatRequest$outboundSchema.parse({
      model: "openai/gpt-4o",
      messages: [{ role: "user", content: "Hi" }, { role: "tool", toolCallId: "c1", content: "ok" }],
      maxCompletionTokens: 100,
      reasoningEffort: "low",
      serviceTier: "flex",
      sessionId: "s1",
      stopServerToolsWhen: [{ type: "step_count_is", stepCount: 2 }],
      provider: { allowFallbacks: true, dataCollection: "allow", maxPrice: { prompt: "1" } },
      debug: { echoUpstreamBody: false },
      trace: { traceId: "t" },
    });
    expect(issuePaths(chatCompletionRequest, JSON.parse(JSON.stringify(wire)))).toEqual([]);
  });

  it("accepts an assistant message the SDK sends back with the server tool calls the gateway ran", () => {
    const wire = ChatRequest$outboundSchema.parse({
      model: "openai/gpt-4o",
      messages: [
        { role: "user", content: "Time?" },
        {
          role: "assistant",
          content: "It is noon.",
          reasoningDetails: [
            { type: "reasoning.text", text: "Ask the clock.", signature: "sig" },
            { type: "reasoning.server_tool_call", toolName: "openrouter:datetime", toolCallId: "call_1", arguments: "{}", result: '{"datetime":"12:00"}', index: 1 },
          ],
        },
        { role: "user", content: "Thanks" },
      ],
    });
    expect(issuePaths(chatCompletionRequest, JSON.parse(JSON.stringify(wire)))).toEqual([]);
  });

  it("refuses a server tool call entry without what replaying it needs", () => {
    const call = { type: "reasoning.server_tool_call", tool_name: "openrouter:datetime", arguments: "{}" };
    const messages = [{ role: "user", content: "Hi" }, { role: "assistant", content: "x", reasoning_details: [{ type: "reasoning.text", text: "t" }, call] }];
    expect(issuePaths(chatCompletionRequest, { ...minimal, messages })).toEqual(["messages.1.reasoning_details.1.result"]);
  });

  it.each([
    ["messages", { messages: [] }],
    ["messages", { messages: undefined }],
    ["messages.0.role", { messages: [{ role: "narrator", content: "x" }] }],
    ["messages.0.content", { messages: [{ role: "user" }] }],
    ["messages.0.tool_call_id", { messages: [{ role: "tool", content: "x" }] }],
    ["model", { model: "gpt-4o" }],
    ["models.0", { models: ["gpt-4o"] }],
    ["temperature", { temperature: -0.1 }],
    ["temperature", { temperature: 2.1 }],
    ["top_p", { top_p: 1.1 }],
    ["top_k", { top_k: 0 }],
    ["top_k", { top_k: 1.5 }],
    ["top_a", { top_a: -0.1 }],
    ["min_p", { min_p: 1.1 }],
    ["frequency_penalty", { frequency_penalty: -2.1 }],
    ["presence_penalty", { presence_penalty: 2.1 }],
    ["repetition_penalty", { repetition_penalty: 0 }],
    ["repetition_penalty", { repetition_penalty: 2.01 }],
    ["logit_bias.50256", { logit_bias: { "50256": 101 } }],
    ["logit_bias.word", { logit_bias: { word: 1 } }],
    ["logprobs", { logprobs: "yes" }],
    ["top_logprobs", { top_logprobs: 21 }],
    ["top_logprobs", { top_logprobs: -1 }],
    ["seed", { seed: 1.5 }],
    ["stop", { stop: ["a", "b", "c", "d", "e"] }],
    ["stream", { stream: "yes" }],
    ["stream_options.include_usage", { stream_options: { include_usage: 1 } }],
    ["metadata", { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }],
    [`metadata.${"k".repeat(65)}`, { metadata: { ["k".repeat(65)]: "v" } }],
    ["metadata.k", { metadata: { k: "v".repeat(513) } }],
    ["session_id", { session_id: "s".repeat(257) }],
    ["max_tokens", { max_tokens: 0 }],
    ["max_completion_tokens", { max_completion_tokens: 1.5 }],
    ["reasoning.effort", { reasoning: { effort: "extreme" } }],
    ["reasoning.summary", { reasoning: { summary: "long" } }],
    ["reasoning_effort", { reasoning_effort: "ultra" }],
    ["reasoning_effort", { reasoning_effort: "low", reasoning: { effort: "high" } }],
    ["max_tool_calls", { max_tool_calls: -1 }],
    ["max_tool_calls", { max_tool_calls: 31 }],
    ["stop_server_tools_when", { stop_server_tools_when: [] }],
    ["stop_server_tools_when.0.step_count", { stop_server_tools_when: [{ type: "step_count_is", step_count: 0 }] }],
    ["stop_server_tools_when.0.max_cost_in_dollars", { stop_server_tools_when: [{ type: "max_cost", max_cost_in_dollars: 0 }] }],
    ["service_tier", { service_tier: "turbo" }],
    ["route", { route: "auto" }],
    ["provider.data_collection", { provider: { data_collection: "maybe" } }],
    ["provider.allow_fallbacks", { provider: { allow_fallbacks: "no" } }],
    ["provider.sort", { provider: { sort: "cheapest" } }],
    ["provider.max_price.prompt", { provider: { max_price: { prompt: "cheap" } } }],
    ["provider.max_price", { provider: { max_price: { per_million: "1" } } }],
    ["provider.max_price.search_unit", { provider: { max_price: { search_unit: -0.001 } } }],
    ["provider.max_price.prompt", { provider: { max_price: { prompt: "-1" } } }],
    ["provider.order", { provider: { order: "openai" } }],
    ["provider", { provider: { allow_fallback: false } }],
    ["provider", { provider: { sortt: "price" } }],
    ["provider.sort", { provider: { sort: { by: "price", partiton: "none" } } }],
    ["provider.preferred_max_latency", { provider: { preferred_max_latency: { p95: 1 } } }],
    ["provider.preferred_max_latency", { provider: { preferred_max_latency: -5 } }],
    ["provider.preferred_min_throughput", { provider: { preferred_min_throughput: -1 } }],
    ["provider.preferred_min_throughput.p90", { provider: { preferred_min_throughput: { p90: -1 } } }],
    ["response_format.type", { response_format: { type: "xml" } }],
    ["response_format.json_schema.name", { response_format: { type: "json_schema", json_schema: {} } }],
    ["prediction.type", { prediction: { type: "diff", content: "x" } }],
    ["modalities.0", { modalities: ["video"] }],
    ["image_config", { image_config: "square" }],
    ["tools.0", { tools: [{ type: "function", function: { name: "bad name!" } }] }],
    ["tool_choice", { tool_choice: "sometimes" }],
    ["parallel_tool_calls", { parallel_tool_calls: "true" }],
    ["plugins.0.id", { plugins: [{ enabled: true }] }],
    ["plugins.0.cost_tier", { plugins: [{ id: "auto-router", cost_tier: "free" }] }],
    ["cache_control.type", { cache_control: { type: "persistent" } }],
    ["prompt_cache_options.mode", { prompt_cache_options: { mode: "implicit" } }],
    ["debug.echo_upstream_body", { debug: { echo_upstream_body: "yes" } }],
    ["trace.trace_id", { trace: { trace_id: 7 } }],
    ["user", { user: 7 }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(chatCompletionRequest, { ...minimal, ...patch })).toContain(field);
  });

  it("refuses a provider key OpenRouter does not document, naming it", () => {
    const misspelt = chatCompletionRequest.safeParse({ ...minimal, provider: { alow_fallbacks: false, order: ["a"] } });
    expect(misspelt.error?.issues).toEqual([expect.objectContaining({ code: "unrecognized_keys", keys: ["alow_fallbacks"], path: ["provider"] })]);
    const nested = chatCompletionRequest.safeParse({ ...minimal, provider: { sort: { by: "price", partiton: "none" } } });
    expect(nested.error?.issues).toEqual([expect.objectContaining({ code: "unrecognized_keys", keys: ["partiton"], path: ["provider", "sort"] })]);
  });

  it("keeps a max_price on every unit the catalog prices, and refuses a key it cannot enforce", () => {
    const max_price = {
      prompt: "0.000001",
      completion: "0.000002",
      request: "0.01",
      image: "0.04",
      audio: "0.000003",
      input_cache_read: "0.0000001",
      input_cache_write: "0.000002",
      input_cache_write_1h: "0.000003",
      internal_reasoning: "0.000002",
      web_search: "0.01",
      audio_second: "0.0001",
      image_output: "0.04",
      audio_output: "0.000012",
      character: "0.000015",
      search_unit: "0.002",
    };
    expect(chatCompletionRequest.parse({ ...minimal, provider: { max_price } }).provider?.max_price).toEqual(max_price);
    // JSON clients may send numbers; they are read as the same decimal amounts.
    expect(chatCompletionRequest.parse({ ...minimal, provider: { max_price: { prompt: 1.5, search_unit: 0.002 } } }).provider?.max_price).toEqual({ prompt: "1.500000000000", search_unit: "0.002000000000" });
    const unknown = chatCompletionRequest.safeParse({ ...minimal, provider: { max_price: { search_units: "0.002" } } });
    expect(unknown.error?.issues).toEqual([expect.objectContaining({ code: "unrecognized_keys", keys: ["search_units"], path: ["provider", "max_price"] })]);
  });

  it("allows reasoning_effort alongside an equal reasoning.effort", () => {
    expect(issuePaths(chatCompletionRequest, { ...minimal, reasoning_effort: "low", reasoning: { effort: "low" } })).toEqual([]);
    expect(issuePaths(chatCompletionRequest, { ...minimal, reasoning_effort: null, reasoning: { effort: "low" } })).toEqual([]);
  });

  it("reads the metadata opt-in header: disabled by default, enabled or disabled otherwise", () => {
    expect(metadataHeaderValue.parse(undefined)).toBe("disabled");
    expect(metadataHeaderValue.parse("enabled")).toBe("enabled");
    expect(metadataHeaderValue.safeParse("on").success).toBe(false);
  });
});
