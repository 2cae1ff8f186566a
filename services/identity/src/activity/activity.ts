import type { ActivityQuery, DailyActivityQuery } from "@switchyard/contracts";
import { badRequest, type Queryable } from "@switchyard/runtime";
import { schema } from "../migrations.js";
import { bucketMiddle } from "./timings.js";

const dayMs = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The filters both activity reads share, as SQL conditions from `$4` on (after the organization and the days). */
function filters(query: { api_key_hash?: string | undefined; workspace_id?: string | undefined; model?: string | undefined }, params: unknown[]): string {
  const conditions: string[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    params.push(value);
    conditions.push(`${column} = $${params.length}`);
  };
  add("key_hash", query.api_key_hash);
  add("workspace_id", query.workspace_id);
  add("model", query.model);
  return conditions.map((c) => ` AND ${c}`).join("");
}

/** The sums both reads select, as text: bigint and numeric sums would lose digits on the way into JS numbers. */
const sumColumns = `sum(requests)::text AS requests, sum(prompt_tokens)::text AS prompt_tokens, sum(completion_tokens)::text AS completion_tokens,
  sum(reasoning_tokens)::text AS reasoning_tokens, sum(cost)::text AS usage, sum(byok_cost)::text AS byok_usage`;

interface Sums {
  requests: string;
  prompt_tokens: string;
  completion_tokens: string;
  reasoning_tokens: string;
  usage: string;
  byok_usage: string;
}

const numbers = (r: Sums) => ({
  requests: Number(r.requests),
  prompt_tokens: Number(r.prompt_tokens),
  completion_tokens: Number(r.completion_tokens),
  reasoning_tokens: Number(r.reasoning_tokens),
  usage: Number(r.usage),
  byok_usage: Number(r.byok_usage),
});

/** Sums per key are read only by key: the rows without one are fewer by the number of keys. */
const sumsFor = (byKey: boolean) => `${schema}.${byKey ? "activity_key_days" : "activity_days"}`;

/**
 * `GET /activity`: one row per UTC day, model and serving endpoint (and workspace, grouped so) of the last
 * 30 completed UTC days, today left out as OpenRouter leaves it. Generations no endpoint served (every
 * attempt failed) have no endpoint to name and are not listed; `/activity/daily` counts them as errors.
 */
export async function activity(db: Queryable, organizationId: string, query: ActivityQuery, now = Date.now()) {
  const today = Math.floor(now / dayMs) * dayMs;
  const first = dayOf(today - 30 * dayMs);
  const last = dayOf(today - dayMs);
  if (query.date !== undefined && (query.date < first || query.date > last)) {
    throw badRequest(`Invalid query: date: must be one of the last 30 completed UTC days, ${first} to ${last}`);
  }
  const params: unknown[] = [organizationId, query.date ?? first, query.date ?? last];
  const where = filters(query, params);
  const byWorkspace = query.group_by === "workspace";
  const rows = await db.query<Sums & { date: string; model: string; provider: string; upstream_model: string; workspace_id: string | null }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS date, model, provider, upstream_model, ${byWorkspace ? "workspace_id::text" : "NULL"} AS workspace_id,
       ${sumColumns}
     FROM ${sumsFor(query.api_key_hash !== undefined)}
     WHERE organization_id = $1 AND day BETWEEN $2::date AND $3::date AND provider <> ''${where}
     GROUP BY day, model, provider, upstream_model${byWorkspace ? ", workspace_id" : ""}
     ORDER BY day DESC, sum(cost) + sum(byok_cost) DESC, model, provider, upstream_model${byWorkspace ? ", workspace_id" : ""}`,
    params,
  );
  return rows.map((r) => {
    const { usage, byok_usage, ...counts } = numbers(r);
    return {
      date: r.date,
      model: r.model,
      model_permaslug: r.model,
      endpoint_id: `${r.provider}:${r.upstream_model}`,
      provider_name: r.provider,
      usage,
      byok_usage_inference: byok_usage,
      ...counts,
      ...(r.workspace_id !== null ? { workspace_id: r.workspace_id } : {}),
    };
  });
}

const groupColumns = { model: "model", provider: "provider", key: "key_hash", workspace: "workspace_id::text" } as const;

/**
 * `GET /activity/daily`: per UTC day of any range (today included), whole or split by model, provider, key or
 * workspace. Medians are kept per day and model: a row split by provider, key or workspace, or read for one
 * key or workspace, has none.
 */
export async function dailyActivity(db: Queryable, organizationId: string, query: DailyActivityQuery) {
  const params: unknown[] = [organizationId, query.from, query.to];
  const where = filters(query, params);
  const group = query.group_by ? groupColumns[query.group_by] : "NULL::text";
  const range = `WHERE organization_id = $1 AND day BETWEEN $2::date AND $3::date`;
  const timed = (query.group_by === undefined || query.group_by === "model") && query.api_key_hash === undefined && query.workspace_id === undefined;
  const [sums, timings] = await Promise.all([
    db.query<Sums & { date: string; grp: string | null; errors: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS date, ${group} AS grp, sum(errors)::text AS errors, ${sumColumns}
       FROM ${sumsFor(query.api_key_hash !== undefined || query.group_by === "key")} ${range}${where} GROUP BY day, grp ORDER BY day, grp`,
      params,
    ),
    timed
      ? db.query<{ date: string; grp: string | null; bucket: number }>(
          // The median's bucket: the first whose running count reaches half the day's (or the group's) total. Groups
          // are told apart byte by byte: a locale's collation would double the cost of the sort.
          `SELECT to_char(day, 'YYYY-MM-DD') AS date, grp, min(bucket) FILTER (WHERE seen * 2 >= total) AS bucket FROM (
             SELECT day, grp, bucket, sum(n) OVER (PARTITION BY day, grp ORDER BY bucket) AS seen, sum(n) OVER (PARTITION BY day, grp) AS total
             FROM (SELECT day, ${group} COLLATE "C" AS grp, bucket, sum(requests)::integer AS n
                   FROM ${schema}.activity_timings ${range}${where} GROUP BY day, grp, bucket) AS counts
           ) AS running GROUP BY day, grp`,
          params,
        )
      : [],
  ]);
  const medians = new Map(timings.map((t) => [`${t.date}\n${t.grp ?? ""}`, bucketMiddle(t.bucket)]));
  return sums.map((r) => ({
    date: r.date,
    group: r.grp,
    ...numbers(r),
    errors: Number(r.errors),
    p50_generation_time_ms: medians.get(`${r.date}\n${r.grp ?? ""}`) ?? null,
  }));
}
