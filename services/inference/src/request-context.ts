import { chatCompletionRequest, type ChatCompletionRequest, type ResolvedModel } from "@switchyard/contracts";
import { parseInput } from "@switchyard/runtime";
import { appOf } from "@switchyard/upstream";
import type { IncomingHttpHeaders } from "node:http";
import type { Attribution } from "./generations/store.js";
import { isObject } from "./json.js";
import { limitFields } from "./request-body.js";

type Preset = NonNullable<ResolvedModel["preset"]>;

/** Who asked, as the generation records it: the end user and metadata of the body, the app of the headers. */
export function attributionOf(req: { headers: IncomingHttpHeaders }, request: Pick<ChatCompletionRequest, "user" | "metadata">): Attribution {
  return { externalUser: request.user ?? null, metadata: request.metadata ?? null, ...appOf(req.headers) };
}

/**
 * A preset's config merged under a request body: the body's fields win. Fields that are aliases of one
 * setting merge as one: a body that sets `max_tokens` or `max_completion_tokens` drops the preset's value of
 * both, and a body that sets `reasoning_effort` or `reasoning.effort` drops the preset's effort in both places,
 * keeping its other `reasoning` keys when the body gives no `reasoning` object of its own.
 */
export function mergePreset(config: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const defaults = { ...config };
  const sets = (name: string) => body[name] !== undefined;
  if (limitFields.some(sets)) for (const name of limitFields) delete defaults[name];
  if (sets("reasoning_effort") || (isObject(body.reasoning) && body.reasoning.effort !== undefined)) {
    delete defaults.reasoning_effort;
    if (isObject(defaults.reasoning)) {
      const { effort: _effort, ...rest } = defaults.reasoning;
      if (Object.keys(rest).length > 0) defaults.reasoning = rest;
      else delete defaults.reasoning;
    }
  }
  return { ...defaults, ...body };
}

/**
 * A preset (the `preset` field, or `@preset/<slug>` as the model) is resolved first: its config gives the
 * request its defaults (parameters, `provider`, `models`, `plugins`, `session_id`, `trace`, `user`,
 * `max_tool_calls`...) as `mergePreset` merges them. The preset's own `model` is its model reference's answer,
 * so it is left to resolution.
 */
export async function withPreset(
  parsed: ChatCompletionRequest,
  body: unknown,
  resolve: (model: string) => Promise<ResolvedModel>,
): Promise<{ request: ChatCompletionRequest; preset?: Preset; presetRef?: string }> {
  const presetRef = parsed.preset ? `@preset/${parsed.preset}` : parsed.model?.startsWith("@preset/") ? parsed.model : undefined;
  if (!presetRef) return { request: parsed };
  const preset = (await resolve(presetRef)).preset!;
  const { model: _model, ...config } = preset.config;
  const request = parseInput(chatCompletionRequest, mergePreset(config, body as Record<string, unknown>), "body");
  return { request, preset, presetRef };
}
