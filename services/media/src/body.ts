import { modelId, type ResolvedModel } from "@switchyard/contracts";
import { badRequest, requestHost, type Caller } from "@switchyard/runtime";
import { presetNamed, withPresetDefaults, type ResolvedPreset } from "@switchyard/upstream";
import type { Request } from "express";
import { z } from "zod";
import type { MediaDeps } from "./deps.js";

/** The media routes, as a refused preset's error names them. */
export type MediaRoute = "/images" | "/audio/speech" | "/audio/transcriptions";

/** The preset a request's model names, with that name's resolution, which the run reuses. */
export interface Presetted {
  name: string;
  preset: ResolvedPreset;
  resolved: ResolvedModel;
}

/** Fallback models, tried in order when every endpoint of the model before them fails. */
export const fallbackModels = z.array(modelId).min(1).max(8);

/** Most unknown fields one answer names; the rest are counted. */
const namedFields = 5;
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Refuses fields the route does not handle, naming them: a field taken and dropped would have no effect. */
export function refuseUnknown(body: unknown, takes: readonly string[]): void {
  if (!isRecord(body)) return;
  const unknown = Object.keys(body).filter((field) => !takes.includes(field));
  if (unknown.length === 0) return;
  const named = unknown.slice(0, namedFields).map((field) => field.slice(0, 64)).join(", ");
  const more = unknown.length > namedFields ? ` (and ${unknown.length - namedFields} more)` : "";
  throw badRequest(`Invalid body: unknown field${unknown.length > 1 ? "s" : ""} ${named}${more}`);
}

/** A form field's text: strings as they are, numbers and booleans as their text, objects as JSON. */
const formText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/** A preset's config as multipart fields: each list a repeated field, null left out. */
const formFields = (config: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(config)
      .filter(([, value]) => value !== null && value !== undefined)
      .map(([field, value]) => [field, Array.isArray(value) ? value.map(formText) : formText(value)]),
  );

/**
 * The body with the defaults of the preset its model names (`@preset/<slug>`), and that preset; the body
 * alone when it names none. `takes` lists the fields the route handles: a preset setting another is refused
 * with 400. A multipart form (`form`) gets the preset's values as form fields.
 */
export async function withPreset(
  deps: MediaDeps,
  req: Request,
  caller: Caller,
  body: unknown,
  options: { takes: readonly string[]; route: MediaRoute; form?: boolean },
): Promise<{ body: unknown; preset: Presetted | undefined }> {
  const name = presetNamed(body);
  if (!name || !isRecord(body)) return { body, preset: undefined };
  const resolved = await deps.resolve({ model: name, keyHash: caller.keyHash, workspaceId: caller.workspaceId, organizationId: caller.organizationId, host: requestHost(req.headers) });
  const { preset } = resolved;
  if (!preset) return { body, preset: undefined };
  const defaults = options.form ? { ...preset, config: formFields(preset.config) } : preset;
  return { body: withPresetDefaults(defaults, body, options.takes, options.route), preset: { name, preset, resolved } };
}
