import { chatCompletionRequest, type ChatCompletionRequest, type ResolvedModel } from "@switchyard/contracts";
import { parseInput } from "@switchyard/runtime";
import { appOf } from "@switchyard/upstream";
import type { IncomingHttpHeaders } from "node:http";
import type { Attribution } from "./generations/store.js";

type Preset = NonNullable<ResolvedModel["preset"]>;

/** Who asked, as the generation records it: the end user and metadata of the body, the app of the headers. */
export function attributionOf(req: { headers: IncomingHttpHeaders }, request: Pick<ChatCompletionRequest, "user" | "metadata">): Attribution {
  return { externalUser: request.user ?? null, metadata: request.metadata ?? null, ...appOf(req.headers) };
}

/**
 * A preset (the `preset` field, or `@preset/<slug>` as the model) is resolved first: its config gives the
 * request its defaults (parameters, `provider`, `models`, `plugins`, `session_id`, `trace`, `user`,
 * `max_tool_calls`...) and every field the request sets wins. The preset's own `model` is its model
 * reference's answer, so it is left to resolution.
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
  const request = parseInput(chatCompletionRequest, { ...config, ...(body as Record<string, unknown>) }, "body");
  return { request, preset, presetRef };
}
