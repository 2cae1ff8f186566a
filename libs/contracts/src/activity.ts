import { z } from "zod";
import { isoTimestamp, queryInt, uuid } from "./common.js";
import { picodollarAmount, postgresOffset, postgresOffsetMessage, realInstant } from "./stored-values.js";

/** Postgres has no year 0: a date or timestamp in it is refused by the database, so here first. */
const fromYearOne = (value: string) => !value.startsWith("0000-");
const fromYearOneMessage = "must be in the year 1 or later";

/** A UTC day as `YYYY-MM-DD`, a real calendar day from 0001-01-01 on. */
export const utcDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a UTC day as YYYY-MM-DD")
  .refine((day) => !Number.isNaN(Date.parse(`${day}T00:00:00Z`)) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day), "must be a real calendar day")
  .refine(fromYearOne, fromYearOneMessage);

/**
 * An instant as Postgres reads a timestamptz: a real date and time from the year 1 on, its UTC offset at most
 * 15:59 either way (Postgres refuses larger offsets, which ISO 8601 allows up to 23:59).
 */
const queryInstant = z.iso
  .datetime({ offset: true })
  .refine(realInstant, "must be a real date and time")
  .refine(fromYearOne, fromYearOneMessage)
  .refine(postgresOffset, postgresOffsetMessage);

const keyHash = z.string().regex(/^[0-9a-f]{64}$/, "must be a key hash (64 hex characters)");

/** `GET /activity`, as OpenRouter takes it. */
export const activityQuery = z.strictObject({
  date: utcDay.optional().describe("One UTC day of the last 30 completed ones; all of them when omitted"),
  api_key_hash: keyHash.optional(),
  workspace_id: uuid.optional(),
  group_by: z.enum(["workspace"]).optional().describe("`workspace` splits each row per workspace and names it"),
  user_id: z
    .never({ error: "Switchyard has no organization members to filter by; filter by api_key_hash or workspace_id" })
    .optional()
    .describe("Not served: Switchyard keys have no creator user"),
});
export type ActivityQuery = z.infer<typeof activityQuery>;

/** One day of one model on one endpoint (and workspace, when grouped so). */
export const activityItem = z.object({
  date: z.string().describe("UTC day, YYYY-MM-DD"),
  model: z.string(),
  model_permaslug: z.string().describe("The model's id: Switchyard's models carry no dated version"),
  endpoint_id: z.string().describe("`<provider>:<upstream model>`, the endpoint that served"),
  provider_name: z.string().describe("The provider's slug, as generation records name it"),
  usage: z.number().describe("USD charged to keys, BYOK excluded"),
  byok_usage_inference: z.number().describe("USD of generations served with a workspace's own provider key"),
  requests: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  workspace_id: uuid.optional(),
});
export const activityResponse = z.object({ data: z.array(activityItem) });

/** `GET /activity/daily` (Switchyard extension): a range of up to 366 days, today included. */
export const dailyActivityQuery = z
  .strictObject({
    from: utcDay.describe("First UTC day"),
    to: utcDay.describe("Last UTC day, included"),
    group_by: z.enum(["model", "provider", "key", "workspace"]).optional().describe("Split each day by this; one row per day when omitted"),
    api_key_hash: keyHash.optional(),
    workspace_id: uuid.optional(),
    model: z.string().min(1).max(256).optional(),
  })
  .refine((q) => q.from <= q.to, { message: "from must not be after to", path: ["from"] })
  .refine((q) => Date.parse(q.to) - Date.parse(q.from) <= 365 * 86_400_000, { message: "the range must be at most 366 days", path: ["to"] });
export type DailyActivityQuery = z.infer<typeof dailyActivityQuery>;

export const dailyActivityRow = z.object({
  date: z.string(),
  group: z.string().nullable().describe("The model id, provider slug, key hash or workspace id; null when not grouped"),
  requests: z.number().int(),
  errors: z.number().int().describe("Generations that failed or were cancelled"),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  usage: z.number(),
  byok_usage: z.number(),
  p50_generation_time_ms: z
    .number()
    .nullable()
    .describe("Median time from arrival to last byte, within 12%; kept per day and model, so null when split or filtered by anything else"),
});
export const dailyActivityResponse = z.object({ data: z.array(dailyActivityRow) });

const generationStatus = z.enum(["completed", "error", "cancelled"]);

/** `GET /generations` (Switchyard extension): newest first, filtered, a cursor for the next page. */
export const listGenerationsQuery = z
  .strictObject({
    api_key_hash: keyHash.optional(),
    workspace_id: uuid.optional(),
    model: z.string().min(1).max(256).optional(),
    provider: z.string().min(1).max(128).optional(),
    status: generationStatus.optional(),
    operation: z.enum(["chat", "embeddings", "rerank", "transcription", "image", "speech"]).optional(),
    from: queryInstant.optional().describe("Earliest request arrival, included"),
    to: queryInstant.optional().describe("Latest request arrival, excluded"),
    limit: queryInt(1, 200).optional().describe("Page size, 50 by default"),
    cursor: z.string().min(1).max(512).optional().describe("The `next_cursor` of the previous page"),
  })
  .refine((q) => q.from === undefined || q.to === undefined || Date.parse(q.from) < Date.parse(q.to), { message: "from must be before to", path: ["from"] });
export type ListGenerationsQuery = z.infer<typeof listGenerationsQuery>;

export const generationSummary = z.object({
  id: z.string(),
  created_at: isoTimestamp.describe("When the request arrived"),
  operation: z.string().describe("chat, embeddings, rerank, transcription, image or speech"),
  model: z.string(),
  provider: z.string().nullable(),
  upstream_model: z.string().nullable(),
  status: generationStatus,
  api_key_hash: z.string(),
  workspace_id: uuid,
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  usage_estimated: z.boolean(),
  cost: z.number().describe("USD the key was billed, as the generation's total_cost: 0 when a workspace's own provider key served it"),
  byok_cost: z.number().describe("USD a generation served with a workspace's own provider key cost at the endpoint's prices; 0 for the others"),
  is_byok: z.boolean(),
  generation_time_ms: z.number().int().nullable(),
});
export const listGenerationsResponse = z.object({
  data: z.array(generationSummary),
  next_cursor: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last"),
});

/** `GET /credits`, as OpenRouter shapes it. */
export const creditsResponse = z.object({
  data: z.object({
    total_credits: z.number().describe("The organization's credit limit in USD; 1000000000 when none is set"),
    total_usage: z.number().describe("USD the organization's keys were charged, BYOK excluded"),
  }),
});

/** `PUT /credits` (Switchyard extension): the organization-wide credit limit, or null for none. */
export const updateCreditsBody = z.strictObject({
  total_credits: picodollarAmount(z.number().finite().min(0, "must not be negative").max(1e9, "must be at most 1000000000")).nullable(),
});
export type UpdateCreditsBody = z.infer<typeof updateCreditsBody>;
