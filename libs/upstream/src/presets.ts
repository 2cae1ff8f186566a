import type { ResolvedModel } from "@switchyard/contracts";
import { badRequest } from "@switchyard/runtime";

export type ResolvedPreset = NonNullable<ResolvedModel["preset"]>;

const presetPrefix = "@preset/";

/** The `@preset/<slug>` a request's model names, if it names one. */
export function presetNamed(body: unknown): string | undefined {
  const model = (body as { model?: unknown } | null)?.model;
  return typeof model === "string" && model.startsWith(presetPrefix) ? model : undefined;
}

/**
 * A preset's config as the defaults of a request to a route other than chat completions (`route`, as the
 * error names it): each field it sets that the request leaves out is added, and the request's own fields
 * win. Its `model` stays with resolution. A preset that sets a field the route does not take (`takes` lists
 * those it does), or a system prompt, is refused with a 400: that part of it could have no effect here.
 */
export function withPresetDefaults(preset: ResolvedPreset, body: Record<string, unknown>, takes: readonly string[], route: string): Record<string, unknown> {
  const { model: _model, ...config } = preset.config;
  const foreign = Object.keys(config).filter((field) => config[field] !== undefined && !takes.includes(field));
  if (preset.system_prompt) foreign.push("system_prompt");
  if (foreign.length > 0) {
    throw badRequest(`Invalid body: model: preset ${preset.slug} sets ${foreign.join(", ")}, which ${route} does not take`);
  }
  return { ...config, ...body };
}
