import { createHash, randomUUID } from "node:crypto";
import type { recordCharges } from "@switchyard/identity";

/**
 * Synthetic traffic for the activity benchmark: organizations, workspaces, keys, models and providers, and
 * the generation-completed events a gateway would publish for them, drawn from a seeded generator so two
 * runs fill the same shape. Traffic is skewed as real traffic is: a few keys and models carry most of it.
 */

export type Charge = Parameters<typeof recordCharges>[1][number];

/** A log-normal draw of median `median` and spread `sigma` (Box–Muller), clamped to [min, max]. */
function logNormal(random: () => number, median: number, sigma: number, min: number, max: number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.min(max, Math.max(min, Math.round(median * Math.exp(sigma * normal))));
}

/** Picks one of `items` in proportion to its weight. */
function picker<T>(items: readonly T[], weight: (item: T, index: number) => number): (random: () => number) => T {
  const cumulative: number[] = [];
  let total = 0;
  items.forEach((item, i) => cumulative.push((total += weight(item, i))));
  return (random) => {
    const x = random() * total;
    let lo = 0;
    let hi = items.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return items[lo]!;
  };
}

type Operation = "chat" | "embeddings" | "transcription" | "image" | "speech";

interface Model {
  id: string;
  /** Providers serving it; the first is the model's own vendor. */
  providers: string[];
  weight: number;
  /** USD per million prompt and completion tokens. */
  prices: [number, number];
  operation: Operation;
  reasoning?: boolean;
}

export const providers = ["openai", "anthropic", "google", "mistral", "deepseek", "together", "fireworks", "groq"];

export const models: Model[] = [
  { id: "openai/gpt-4o-mini", providers: ["openai"], weight: 20, prices: [0.15, 0.6], operation: "chat" },
  { id: "anthropic/claude-sonnet-4", providers: ["anthropic"], weight: 16, prices: [3, 15], operation: "chat" },
  { id: "google/gemini-2.5-flash", providers: ["google"], weight: 12, prices: [0.3, 2.5], operation: "chat" },
  { id: "openai/gpt-4o", providers: ["openai"], weight: 10, prices: [2.5, 10], operation: "chat" },
  { id: "deepseek/deepseek-v3", providers: ["deepseek", "fireworks", "together"], weight: 8, prices: [0.27, 1.1], operation: "chat" },
  { id: "meta-llama/llama-3.3-70b", providers: ["together", "fireworks", "groq"], weight: 7, prices: [0.6, 0.6], operation: "chat" },
  { id: "openai/text-embedding-3-small", providers: ["openai"], weight: 6, prices: [0.02, 0], operation: "embeddings" },
  { id: "google/gemini-2.5-pro", providers: ["google"], weight: 5, prices: [1.25, 10], operation: "chat", reasoning: true },
  { id: "anthropic/claude-3.5-haiku", providers: ["anthropic"], weight: 4, prices: [0.8, 4], operation: "chat" },
  { id: "deepseek/deepseek-r1", providers: ["deepseek", "together", "fireworks"], weight: 4, prices: [0.55, 2.19], operation: "chat", reasoning: true },
  { id: "openai/o3-mini", providers: ["openai"], weight: 3, prices: [1.1, 4.4], operation: "chat", reasoning: true },
  { id: "qwen/qwen3-235b", providers: ["together", "fireworks"], weight: 3, prices: [0.2, 0.6], operation: "chat", reasoning: true },
  { id: "mistralai/mistral-small", providers: ["mistral", "together"], weight: 3, prices: [0.1, 0.3], operation: "chat" },
  { id: "meta-llama/llama-3.1-8b", providers: ["groq", "together"], weight: 3, prices: [0.05, 0.08], operation: "chat" },
  { id: "mistralai/mistral-large", providers: ["mistral"], weight: 2, prices: [2, 6], operation: "chat" },
  { id: "qwen/qwen3-32b", providers: ["groq", "fireworks"], weight: 2, prices: [0.1, 0.3], operation: "chat" },
  { id: "mistralai/mistral-embed", providers: ["mistral"], weight: 1.5, prices: [0.1, 0], operation: "embeddings" },
  { id: "openai/whisper-1", providers: ["openai"], weight: 0.8, prices: [6, 0], operation: "transcription" },
  { id: "openai/gpt-image-1", providers: ["openai"], weight: 0.5, prices: [5, 40], operation: "image" },
  { id: "openai/tts-1", providers: ["openai"], weight: 0.5, prices: [15, 0], operation: "speech" },
];

export interface Key {
  hash: string;
  organizationId: string;
  workspaceId: string;
  guardrailId: string;
  /** Providers the key's workspace brings its own keys for. */
  byok: readonly string[];
}

export interface Tenants {
  /** The organization the queries are timed for. */
  organizationId: string;
  organizationIds: string[];
  /** Keys of the organization of interest, busiest first. */
  keys: Key[];
  pickKey: (random: () => number) => Key;
}

/** A uuid drawn from `random`, so a seed names the same tenants every run. */
function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/**
 * The organization of interest (70% of traffic, 4 workspaces of 9 keys, one workspace with BYOK for openai
 * and anthropic) and three others (10% each, 2 workspaces, 5 keys, one with BYOK for google): 51 keys.
 * Within an organization the n-th busiest key has weight 1/n.
 */
export function tenants(random: () => number): Tenants {
  const shapes = [
    { share: 0.7, workspaces: 4, keys: 36, byok: ["openai", "anthropic"] },
    { share: 0.1, workspaces: 2, keys: 5, byok: ["google"] },
    { share: 0.1, workspaces: 2, keys: 5, byok: [] },
    { share: 0.1, workspaces: 2, keys: 5, byok: [] },
  ];
  const all: Array<{ key: Key; weight: number }> = [];
  const organizationIds: string[] = [];
  for (const [o, shape] of shapes.entries()) {
    const organizationId = uuidFrom(random);
    organizationIds.push(organizationId);
    const workspaces = Array.from({ length: shape.workspaces }, (_, w) => ({ id: uuidFrom(random), guardrailId: uuidFrom(random), byok: w === 1 ? shape.byok : [] }));
    const harmonic = Array.from({ length: shape.keys }, (_, k) => 1 / (k + 1)).reduce((a, b) => a + b, 0);
    for (let k = 0; k < shape.keys; k++) {
      const workspace = workspaces[k % workspaces.length]!;
      const hash = createHash("sha256").update(`bench-activity-key-${o}-${k}`).digest("hex");
      all.push({
        key: { hash, organizationId, workspaceId: workspace.id, guardrailId: workspace.guardrailId, byok: workspace.byok },
        weight: shape.share / (k + 1) / harmonic,
      });
    }
  }
  const organizationId = organizationIds[0]!;
  return {
    organizationId,
    organizationIds,
    keys: all.filter((k) => k.key.organizationId === organizationId).map((k) => k.key),
    pickKey: picker(
      all.map((k) => k.key),
      (_, i) => all[i]!.weight,
    ),
  };
}

const pickModel = picker(models, (m) => m.weight);
const hex = (random: () => number, length: number) => Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join("");

/**
 * `count` events spread evenly (with jitter) over [`start`, `end`) ms, oldest first as a gateway publishes
 * them: about 2.5% errors and 0.5% cancellations, a third of the errors served by no endpoint (provider
 * null), generation times log-normal around 1.5 s (200 ms for embeddings) within 100 ms–30 s.
 */
export function* charges(tenants: Tenants, count: number, start: number, end: number, random: () => number): Generator<Charge> {
  const step = (end - start) / count;
  for (let i = 0; i < count; i++) {
    const at = start + (i + random()) * step;
    const key = tenants.pickKey(random);
    const model = pickModel(random);
    const provider = model.providers[Math.floor(random() * random() * model.providers.length)]!;
    const outcome = random();
    const status: "completed" | "error" | "cancelled" = outcome < 0.025 ? "error" : outcome < 0.03 ? "cancelled" : "completed";
    const served = status !== "error" || random() < 2 / 3;
    const operation = model.operation;
    const chat = operation === "chat";
    const prompt = status === "error" ? 0 : logNormal(random, chat ? 600 : 300, 1.2, 1, 200_000);
    const completion = status === "error" || !chat ? 0 : logNormal(random, status === "cancelled" ? 60 : 250, 1, 1, 32_000);
    const reasoning = model.reasoning && status !== "error" ? logNormal(random, 800, 1, 0, 32_000) : 0;
    const cost = (prompt * model.prices[0] + (completion + reasoning) * model.prices[1]) / 1e6;
    const time = logNormal(random, status === "error" ? 400 : chat ? 1500 : 200, 0.9, 100, 30_000);
    const occurredAt = new Date(at).toISOString();
    const data = {
      generation_id: `gen-${Math.floor(at / 1000)}-${hex(random, 20)}`,
      key_hash: key.hash,
      organization_id: key.organizationId,
      workspace_id: key.workspaceId,
      guardrail_ids: [key.guardrailId],
      model: model.id,
      provider: served ? provider : null,
      upstream_model: served ? (provider === model.providers[0] ? model.id.split("/")[1]! : model.id) : null,
      status,
      streamed: chat && random() < 0.6,
      prompt_tokens: prompt,
      completion_tokens: completion,
      reasoning_tokens: reasoning,
      usage_estimated: false,
      cost_usd: cost.toFixed(10),
      is_byok: served && key.byok.includes(provider),
      finish_reason: status === "completed" ? "stop" : null,
      generation_time_ms: time,
    };
    if (operation === "chat" || operation === "embeddings") {
      yield {
        id: randomUUID(),
        subject: "inference.generation.completed.v1",
        occurred_at: occurredAt,
        data: { ...data, ...(operation === "embeddings" ? { operation } : {}) },
      };
    } else {
      yield { id: randomUUID(), subject: `media.${operation}.completed.v1`, occurred_at: occurredAt, data };
    }
  }
}
