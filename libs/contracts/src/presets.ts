import { z } from "zod";
import { isoTimestamp, queryInt, uuid } from "./common.js";
import { chatCompletionParams, checkReasoningEffort } from "./chat-request.js";
import { pageQuery } from "./shared.js";

export const presetSlug = z
  .string()
  .min(1, "must not be empty")
  .max(128, "must be at most 128 characters")
  .regex(/^[A-Za-z0-9._~-]+$/, "must be URL-safe (letters, digits, '-', '.', '_', '~')")
  // URL dot segments: a path ending in `/presets/..` is not a path to the preset, so it could not be read or deleted.
  .refine((slug) => slug !== "." && slug !== "..", "must not be '.' or '..'");

export const presetSlugParams = z.object({ slug: presetSlug });
export const presetVersionParams = z.object({ slug: presetSlug, version: queryInt(1, 1_000_000_000) });

/** A version's config: the chat parameters it pins; `model` and `temperature` are the ones the spec shows. */
export const presetConfig = z.looseObject({
  model: z.string().optional(),
  temperature: z.number().optional(),
});

export const presetVersion = z.object({
  id: uuid,
  preset_id: uuid,
  version: z.number().int().min(1),
  system_prompt: z.string(),
  config: presetConfig,
  creator_id: z.string(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export type PresetVersion = z.infer<typeof presetVersion>;

export const preset = z.object({
  id: uuid,
  slug: presetSlug,
  name: z.string(),
  description: z.string().nullable(),
  status: z.string().describe("`active` is the value the spec shows"),
  status_updated_at: isoTimestamp.nullable(),
  designated_version_id: uuid,
  workspace_id: uuid,
  creator_user_id: z.string(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});
export type Preset = z.infer<typeof preset>;

/** `GET /presets/{slug}` carries the designated version inline. */
export const presetWithVersion = preset.extend({ designated_version: presetVersion });
export type PresetWithVersion = z.infer<typeof presetWithVersion>;

export const presetResponse = z.object({ data: presetWithVersion });
export const listPresetsQuery = z.object(pageQuery);
export const listPresetsResponse = z.object({ data: z.array(preset), total_count: z.number().int().min(0) });
export const presetVersionResponse = z.object({ data: presetVersion });
export const listPresetVersionsResponse = z.object({
  data: z.array(presetVersion),
  total_count: z.number().int().min(0),
});

/**
 * `POST /presets/{slug}/chat/completions`: creates the preset, or a new version of it, from a chat
 * request body. Only fields a preset can pin are kept; `messages`, `stream` and the like are ignored,
 * so they are not validated here.
 */
export const createPresetBody = chatCompletionParams
  .extend({
    messages: z.array(z.unknown()).optional(),
    name: z.string().trim().min(1).max(100).optional().describe("Display name; defaults to the slug"),
    description: z.string().max(1000).nullable().optional(),
    system_prompt: z.string().max(100_000).optional(),
  })
  .superRefine(checkReasoningEffort);
export type CreatePresetBody = z.infer<typeof createPresetBody>;

/** `POST /presets`: the same as saving through `/presets/{slug}/chat/completions`, with the slug in the body. */
export const createNamedPresetBody = createPresetBody.and(z.object({ slug: presetSlug }));
export type CreateNamedPresetBody = z.infer<typeof createNamedPresetBody>;

/** `POST /presets/{slug}/designated-version`: which version `@preset/<slug>` runs. */
export const designatePresetBody = z.strictObject({ version: z.number().int().min(1) });
