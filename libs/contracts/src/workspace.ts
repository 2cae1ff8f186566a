import { z } from "zod";
import { providerSort } from "./chat-request.js";
import { isoTimestamp, queryInt, uuid } from "./common.js";

/** Provider slugs: lower-case, as used in routing preferences. */
const providerSlug = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "must be a provider slug");

export const workspace = z.object({
  id: uuid,
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp.nullable(),
  created_by: z.string().nullable(),
  default_guardrail_id: uuid.describe("Id reserved for the workspace's default guardrail"),
  default_image_model: z.string().nullable(),
  default_text_model: z.string().nullable(),
  default_provider_sort: z.string().nullable(),
  disabled_server_tools: z.array(z.string()).nullable(),
  include_byok_in_budgets: z.boolean(),
  io_logging_api_key_ids: z.array(z.number().int()).nullable(),
  io_logging_sampling_rate: z.number(),
  is_data_discount_logging_enabled: z.boolean(),
  is_observability_broadcast_enabled: z.boolean(),
  is_observability_io_logging_enabled: z.boolean(),
  is_default: z.boolean().describe("Switchyard extension: the organization's default workspace"),
  allowed_providers: z.array(z.string()).nullable().describe("Switchyard extension: only these providers"),
  ignored_providers: z.array(z.string()).nullable().describe("Switchyard extension: never these providers"),
  data_collection: z.enum(["allow", "deny"]).describe("Switchyard extension: providers that collect data"),
  zdr: z.boolean().describe("Switchyard extension: zero data retention required"),
});
export type Workspace = z.infer<typeof workspace>;

const slug = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9-]*$/, "must be lower-case letters, digits and dashes");
/**
 * A workspace default model: a model id. A preset (`@preset/<slug>`) is refused: a request that names no model
 * applies no preset's settings, so its default would run the preset's model alone.
 */
const defaultModel = z
  .string()
  .max(256)
  .refine((model) => !model.startsWith("@preset/"), "must be a model id, not a preset; name the preset in the request instead");
const settings = {
  description: z.string().max(1000).nullable().optional(),
  default_image_model: defaultModel.nullable().optional().describe("The model of an image request that names none"),
  default_text_model: defaultModel.nullable().optional().describe("The model of a chat request that names none"),
  default_provider_sort: providerSort.nullable().optional().describe("The provider order of requests that set no provider.sort"),
  disabled_server_tools: z.array(z.string().max(128)).max(64).nullable().optional().describe("Server tools the workspace's requests may not use"),
  include_byok_in_budgets: z.boolean().optional(),
  io_logging_api_key_ids: z
    .array(z.number().int())
    .max(0, "Switchyard's keys have no numeric ids; leave it null (or empty) to log every key's requests")
    .nullable()
    .optional()
    .describe("Only null or empty: input/output logging covers every key of the workspace"),
  io_logging_sampling_rate: z.number().min(0).max(1).optional().describe("The share of generations input/output logging keeps (0 to 1)"),
  /** Switchyard does not trade prompt logging for a discount: true is refused rather than stored to do nothing. */
  is_data_discount_logging_enabled: z
    .boolean()
    .refine((on) => !on, "Switchyard does not trade prompt logging for a discount; only false is accepted")
    .optional(),
  is_observability_broadcast_enabled: z.boolean().optional().describe("Send the workspace's generations to the broadcast destinations (OTLP, webhook)"),
  is_observability_io_logging_enabled: z
    .boolean()
    .optional()
    .describe("Keep what the workspace's generations were sent and answered, for GET /generation/content (off by default)"),
  allowed_providers: z.array(providerSlug).max(200).nullable().optional().describe("Only these providers serve the workspace's requests"),
  ignored_providers: z.array(providerSlug).max(200).nullable().optional().describe("These providers never serve the workspace's requests"),
  data_collection: z.enum(["allow", "deny"]).optional().describe("deny: no provider that retains prompts or trains on them"),
  zdr: z.boolean().optional().describe("Only zero-data-retention endpoints serve the workspace's requests"),
};

export const createWorkspaceBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  slug,
  ...settings,
});
export type CreateWorkspaceBody = z.infer<typeof createWorkspaceBody>;

export const updateWorkspaceBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  slug: slug.optional(),
  ...settings,
});
export type UpdateWorkspaceBody = z.infer<typeof updateWorkspaceBody>;

export const workspaceIdParams = z.object({ id: uuid });
export const listWorkspacesQuery = z.object({
  offset: queryInt(0, 1_000_000_000).optional(),
  limit: queryInt(1, 1000).optional(),
});
export const workspaceResponse = z.object({ data: workspace });
export const listWorkspacesResponse = z.object({ data: z.array(workspace), total_count: z.number().int() });
export const deleteWorkspaceResponse = z.object({ deleted: z.literal(true) });
