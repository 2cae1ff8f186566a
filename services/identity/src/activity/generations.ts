import type { ListGenerationsQuery } from "@switchyard/contracts";
import { badRequest, type Queryable } from "@switchyard/runtime";
import { schema } from "../migrations.js";

/** Where a page ended: the last row's arrival time (as Postgres wrote it, to the microsecond) and id. */
interface Cursor {
  at: string;
  id: string;
}

const encodeCursor = (cursor: Cursor): string => Buffer.from(JSON.stringify([cursor.at, cursor.id])).toString("base64url");

/** The arrival time as the list writes it: `to_char` of a ledger row, UTC to the microsecond. */
const cursorTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Whether the time is one the list could have written: a real date and time of the year 1 or later. */
function listedTime(at: string): boolean {
  if (!cursorTime.test(at) || at.startsWith("0000-")) return false;
  const parsed = Date.parse(at);
  return !Number.isNaN(parsed) && new Date(parsed).toISOString().slice(0, 19) === at.slice(0, 19);
}

/** A generation id as the ledger keeps it: text Postgres takes (no NUL), as long as `GET /generation` takes. */
const listedId = (id: string): boolean => id.length > 0 && id.length <= 256 && !id.includes("\u0000");

/** The cursor a page ended with; anything else, down to a time or id Postgres would refuse, is a 400. */
function decodeCursor(text: string): Cursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2) {
      const [at, id] = value as unknown[];
      if (typeof at === "string" && typeof id === "string" && listedTime(at) && listedId(id)) return { at, id };
    }
  } catch {
    // refused below
  }
  throw badRequest("Invalid query: cursor: not a cursor this list gave");
}

const columns: Array<[keyof ListGenerationsQuery, string]> = [
  ["api_key_hash", "key_hash"],
  ["workspace_id", "workspace_id"],
  ["model", "model"],
  ["provider", "provider"],
  ["status", "status"],
  ["operation", "operation"],
];

interface Row {
  id: string;
  at: string;
  operation: string;
  model: string;
  provider: string | null;
  upstream_model: string | null;
  status: "completed" | "error" | "cancelled";
  key_hash: string;
  workspace_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  usage_estimated: boolean;
  cost: string;
  is_byok: boolean;
  generation_time_ms: number | null;
}

/**
 * `GET /generations`: the organization's generations from the ledger (chat, embeddings, rerank and media
 * alike), newest request first, each page ending in a cursor on (arrival, id), so that rows written
 * meanwhile are not repeated. The filters are equalities and a range of arrival times.
 */
export async function listGenerations(db: Queryable, organizationId: string, query: ListGenerationsQuery) {
  const params: unknown[] = [organizationId];
  const conditions = ["organization_id = $1"];
  const add = (condition: (at: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(condition(`$${params.length}`));
  };
  for (const [name, column] of columns) if (query[name] !== undefined) add((at) => `${column} = ${at}`, query[name]);
  if (query.from !== undefined) add((at) => `started_at >= ${at}::timestamptz`, query.from);
  if (query.to !== undefined) add((at) => `started_at < ${at}::timestamptz`, query.to);
  if (query.cursor !== undefined) {
    const cursor = decodeCursor(query.cursor);
    params.push(cursor.at, cursor.id);
    conditions.push(`(started_at, generation_id) < ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  const limit = query.limit ?? 50;
  params.push(limit + 1);
  const rows = await db.query<Row>(
    `SELECT generation_id AS id, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, operation, model, provider,
       upstream_model, status, key_hash, workspace_id::text, prompt_tokens, completion_tokens, reasoning_tokens, usage_estimated,
       cost::text AS cost, is_byok, generation_time_ms
     FROM ${schema}.ledger WHERE ${conditions.join(" AND ")}
     ORDER BY started_at DESC, generation_id DESC LIMIT $${params.length}`,
    params,
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map((r) => ({
      id: r.id,
      created_at: r.at,
      operation: r.operation,
      model: r.model,
      provider: r.provider,
      upstream_model: r.upstream_model,
      status: r.status,
      api_key_hash: r.key_hash,
      workspace_id: r.workspace_id,
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      reasoning_tokens: r.reasoning_tokens,
      usage_estimated: r.usage_estimated,
      // The ledger keeps a BYOK generation's price at the endpoint's rates as its cost; the key was billed nothing,
      // as the generation record's total_cost says, so the list gives that price apart.
      cost: r.is_byok ? 0 : Number(r.cost),
      byok_cost: r.is_byok ? Number(r.cost) : 0,
      is_byok: r.is_byok,
      generation_time_ms: r.generation_time_ms,
    })),
    next_cursor: rows.length > limit && last ? encodeCursor({ at: last.at, id: last.id }) : null,
  };
}
