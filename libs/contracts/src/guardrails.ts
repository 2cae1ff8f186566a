import { z } from "zod";
import { isoTimestamp, limitReset, uuid } from "./common.js";
import { deletedResponse, pageQuery } from "./shared.js";
import { picodollarAmount } from "./stored-values.js";

/** The four vendors with their own zero-data-retention switch; everything else is `other`. */
export const zdrVendors = ["anthropic", "openai", "google", "xai"] as const;

export const dataRegion = z.enum(["global", "europe", "us"]);
export const contentFilterAction = z.enum(["redact", "block", "flag"]);
export const contentFilterBuiltinSlug = z.enum([
  "email",
  "phone",
  "ssn",
  "credit-card",
  "ip-address",
  "secrets",
  "person-name",
  "address",
  "regex-prompt-injection",
]);

export type ContentFilterBuiltinSlug = z.infer<typeof contentFilterBuiltinSlug>;

/** Each builtin's own label, the typed placeholder its redaction writes; used when a request gives none. */
export const builtinLabels: Record<ContentFilterBuiltinSlug, string> = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  ssn: "[SSN]",
  "credit-card": "[CREDIT_CARD]",
  "ip-address": "[IP_ADDRESS]",
  secrets: "[SECRET]",
  "person-name": "[PERSON_NAME]",
  address: "[ADDRESS]",
  "regex-prompt-injection": "[PROMPT_INJECTION]",
};

const builtinFields = {
  slug: contentFilterBuiltinSlug,
  action: contentFilterAction,
  scan_scope: z.enum(["user_only", "all_messages"]).optional(),
};

/** A builtin as a request gives it: the label may be left out. */
export const contentFilterBuiltin = z.object({ ...builtinFields, label: z.string().max(100).optional() });

/** A builtin as the API answers it: `slug`, `label` and `action` always. */
export const storedContentFilterBuiltin = z.object({ ...builtinFields, label: z.string() });

/** The builtins with every missing label filled with the builtin's own. */
export const withBuiltinLabels = (items: z.infer<typeof contentFilterBuiltin>[]): z.infer<typeof storedContentFilterBuiltin>[] =>
  items.map((item) => ({ ...item, label: item.label ?? builtinLabels[item.slug] }));

export const contentFilter = z.object({
  /** RE2 syntax (no lookaround or backreferences), which runs in time linear in the text; catalog checks it compiles. */
  pattern: z.string().min(1).max(1000).describe("A regular expression in RE2 syntax: matched spans are redacted, flagged or block the request"),
  label: z.string().max(100).nullable().optional(),
  action: contentFilterAction,
});

/** The spec's guardrail record, with the schema-level example's extra fields. */
export const guardrail = z.object({
  id: uuid,
  name: z.string(),
  description: z.string().nullable(),
  workspace_id: uuid,
  created_at: isoTimestamp,
  updated_at: isoTimestamp.nullable(),
  limit_usd: z.number().nullable().describe("Budget in USD; null means no budget"),
  reset_interval: limitReset.nullable(),
  include_byok_in_budgets: z.boolean(),
  allowed_providers: z.array(z.string()).nullable(),
  ignored_providers: z.array(z.string()).nullable(),
  allowed_models: z.array(z.string()).nullable(),
  ignored_models: z.array(z.string()).nullable(),
  allowed_data_regions: z.array(dataRegion).nullable(),
  enforce_zdr: z.boolean().nullable(),
  enforce_zdr_anthropic: z.boolean(),
  enforce_zdr_openai: z.boolean(),
  enforce_zdr_google: z.boolean(),
  enforce_zdr_xai: z.boolean(),
  enforce_zdr_other: z.boolean(),
  enable_free_model_publication: z.boolean(),
  enable_free_model_training: z.boolean(),
  enable_paid_model_training: z.boolean(),
  content_filter_builtins: z.array(storedContentFilterBuiltin),
  content_filters: z.array(contentFilter).nullable(),
  disable_response_cache: z.boolean().describe("Switchyard extension: the keys' requests never use the response cache"),
});
export type Guardrail = z.infer<typeof guardrail>;

const slugList = z.array(z.string().min(1).max(256)).max(1000).nullable().optional();
const flag = z.boolean().nullable().optional();

const settings = {
  description: z.string().max(1000).nullable().optional(),
  limit_usd: picodollarAmount(z.number().finite().min(0, "must not be negative").max(1e9))
    .nullable()
    .optional()
    .describe("Budget of each key the guardrail is assigned to, on its own, per reset_interval; bound at the hold"),
  reset_interval: limitReset.nullable().optional(),
  include_byok_in_budgets: z.boolean().optional().describe("Count spend on workspaces' own provider keys against the budget"),
  allowed_providers: slugList.describe("Only these providers serve the keys' requests"),
  ignored_providers: slugList.describe("These providers never serve the keys' requests"),
  allowed_models: slugList.describe("Only these models (a variant such as :free is covered by its base id)"),
  ignored_models: slugList.describe("These models never serve the keys (a base id covers its variants)"),
  allowed_data_regions: z
    .array(dataRegion)
    .min(1, "must not be empty; use null for no restriction")
    .nullable()
    .optional()
    .describe("Only endpoints that process data in these regions"),
  enforce_zdr: flag.describe("Deprecated: copied into each enforce_zdr_<vendor> not given explicitly"),
  enforce_zdr_anthropic: flag.describe("Anthropic models only on zero-data-retention endpoints"),
  enforce_zdr_openai: flag.describe("OpenAI models only on zero-data-retention endpoints"),
  enforce_zdr_google: flag.describe("Google models only on zero-data-retention endpoints"),
  enforce_zdr_xai: flag.describe("xAI models only on zero-data-retention endpoints"),
  enforce_zdr_other: flag.describe("Every other vendor's models only on zero-data-retention endpoints"),
  enable_free_model_publication: flag.describe("Allow free endpoints that may publish prompts (data_policy.publishes_free_prompts)"),
  enable_free_model_training: flag.describe("Allow free endpoints of providers that train on prompts"),
  enable_paid_model_training: flag.describe("Allow paid endpoints of providers that train on prompts"),
  content_filter_builtins: z
    .array(contentFilterBuiltin)
    .max(50)
    .nullable()
    .optional()
    .describe("Detectors run on every prompt before a provider sees it: block (403), redact (the label) or flag"),
  content_filters: z
    .array(contentFilter)
    .max(100)
    .nullable()
    .optional()
    .describe("Workspace patterns (RE2) run on every prompt, with the same actions"),
  disable_response_cache: flag.describe("The keys' requests never read or write the response cache (X-OpenRouter-Cache is answered BYPASS)"),
};

const name = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters");

/** A budget without an interval (or the reverse) is ambiguous, so the two come together. */
export const createGuardrailBody = z
  .strictObject({ name, workspace_id: uuid.optional(), ...settings })
  .superRefine((body, ctx) => {
    const hasLimit = body.limit_usd != null;
    const hasInterval = body.reset_interval != null;
    if (hasLimit !== hasInterval) {
      ctx.addIssue({
        code: "custom",
        path: [hasLimit ? "reset_interval" : "limit_usd"],
        message: "limit_usd and reset_interval must be provided together",
      });
    }
  });
export type CreateGuardrailBody = z.infer<typeof createGuardrailBody>;

export const updateGuardrailBody = z.strictObject({ name: name.optional(), ...settings });
export type UpdateGuardrailBody = z.infer<typeof updateGuardrailBody>;

export const guardrailIdParams = z.object({ id: uuid });
export const listGuardrailsQuery = z.object({ ...pageQuery, workspace_id: uuid.optional() });
export const guardrailResponse = z.object({ data: guardrail });
export const listGuardrailsResponse = z.object({ data: z.array(guardrail), total_count: z.number().int().min(0) });
export const deleteGuardrailResponse = deletedResponse;

export const keyAssignment = z.object({
  id: z.string(),
  guardrail_id: uuid,
  key_hash: z.string(),
  key_name: z.string(),
  key_label: z.string(),
  assigned_by: z.string().nullable(),
  created_at: isoTimestamp,
});
export type KeyAssignment = z.infer<typeof keyAssignment>;

export const listKeyAssignmentsQuery = z.object(pageQuery);
export const listKeyAssignmentsResponse = z.object({
  data: z.array(keyAssignment),
  total_count: z.number().int().min(0),
});

const keyHashes = z
  .array(z.string().regex(/^[0-9a-f]{64}$/, "must be the 64-character hex hash of a key"))
  .min(1, "must list at least 1 key")
  .max(1000, "must list at most 1000 keys");

export const assignKeysBody = z.strictObject({ key_hashes: keyHashes });
export type AssignKeysBody = z.infer<typeof assignKeysBody>;
export const assignKeysResponse = z.object({ assigned_count: z.number().int().min(0) });
export const unassignKeysBody = assignKeysBody;
export const unassignKeysResponse = z.object({ unassigned_count: z.number().int().min(0) });
