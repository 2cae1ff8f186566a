import { randomUUID } from "node:crypto";
import { activityResponseFromJSON } from "@openrouter/sdk/models";
import type { EventEnvelope } from "@switchyard/contracts";
import { HttpError, migrate, openPglite, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { recordCharges } from "../spend/ledger.js";
import { activity, dailyActivity } from "./activity.js";

const organization = randomUUID();
const other = randomUUID();
const workspace = randomUUID();
const research = randomUUID();
const alice = "a".repeat(64);
const bob = "b".repeat(64);

const dayMs = 86_400_000;
const now = Date.parse("2026-03-15T12:00:00Z");
const daysAgo = (n: number, hour = 10) => new Date(Date.parse("2026-03-15T00:00:00Z") - n * dayMs + hour * 3_600_000).toISOString();

interface Charge {
  at: string;
  key?: string;
  org?: string;
  ws?: string;
  model?: string;
  provider?: string | null;
  upstream?: string | null;
  status?: "completed" | "error" | "cancelled";
  cost?: string;
  byok?: boolean;
  ms?: number;
  reasoning?: number;
  id?: string;
}

const charge = (c: Charge): EventEnvelope<"inference.generation.completed.v1"> => ({
  id: randomUUID(),
  subject: "inference.generation.completed.v1",
  occurred_at: c.at,
  data: {
    generation_id: c.id ?? `gen-${randomUUID()}`,
    key_hash: c.key ?? alice,
    organization_id: c.org ?? organization,
    workspace_id: c.ws ?? workspace,
    guardrail_ids: [],
    model: c.model ?? "vendor/chat",
    provider: c.provider === undefined ? "vendor" : c.provider,
    status: c.status ?? "completed",
    streamed: false,
    prompt_tokens: 100,
    completion_tokens: 20,
    usage_estimated: false,
    cost_usd: c.cost ?? "0.001",
    is_byok: c.byok ?? false,
    generation_time_ms: c.ms ?? 500,
    upstream_model: c.upstream === undefined ? "chat-1" : c.upstream,
    reasoning_tokens: c.reasoning ?? 0,
  },
});

let db: Db;
beforeAll(async () => {
  db = await openPglite();
  await migrate(db, schema, migrations);
  const speech: EventEnvelope<"media.speech.completed.v1"> = { ...charge({ at: daysAgo(2), model: "vendor/voice", upstream: "tts-1" }), subject: "media.speech.completed.v1" };
  const repeated = charge({ at: daysAgo(1), cost: "0.5", id: "gen-repeated" });
  await recordCharges(db, [
    charge({ at: daysAgo(1), cost: "0.002", reasoning: 7 }),
    charge({ at: daysAgo(1), cost: "0.003", key: bob, ws: research }),
    charge({ at: daysAgo(1), cost: "0.004", byok: true }),
    charge({ at: daysAgo(1), model: "vendor/embed", upstream: "embed-1", cost: "0.0001" }),
    charge({ at: daysAgo(1), status: "error", provider: null, upstream: null, cost: "0" }),
    charge({ at: daysAgo(30), cost: "0.01" }),
    charge({ at: daysAgo(31), cost: "0.02" }),
    charge({ at: daysAgo(0), cost: "0.03" }),
    charge({ at: daysAgo(1), org: other, cost: "9" }),
    ...[100, 100, 1_000, 50_000].map((ms) => charge({ at: daysAgo(5), model: "vendor/timed", ms })),
    speech,
    repeated,
  ]);
  // A charge reported again is in the ledger once, and in the sums once.
  await recordCharges(db, [{ ...repeated, id: randomUUID() }]);
});
afterAll(async () => {
  await db?.close();
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("it should be refused"),
    (error: unknown) => error as HttpError,
  );

describe("activity", () => {
  it("sums the last 30 completed UTC days per day, model and endpoint, newest day first, today and older days left out", async () => {
    const rows = await activity(db, organization, {}, now);
    expect(rows.map((r) => r.date)).toEqual(["2026-03-14", "2026-03-14", "2026-03-13", "2026-03-10", "2026-02-13"]);
    const chat = rows.find((r) => r.date === "2026-03-14" && r.model === "vendor/chat")!;
    expect(chat).toEqual({
      date: "2026-03-14",
      model: "vendor/chat",
      model_permaslug: "vendor/chat",
      endpoint_id: "vendor:chat-1",
      provider_name: "vendor",
      usage: 0.505,
      byok_usage_inference: 0.004,
      requests: 4,
      prompt_tokens: 400,
      completion_tokens: 80,
      reasoning_tokens: 7,
    });
    expect(rows.find((r) => r.model === "vendor/embed")).toMatchObject({ endpoint_id: "vendor:embed-1", requests: 1, usage: 0.0001 });
    expect(rows.find((r) => r.model === "vendor/voice")).toMatchObject({ date: "2026-03-13", endpoint_id: "vendor:tts-1" });
    expect(rows.find((r) => r.date === "2026-02-13")).toMatchObject({ usage: 0.01 });
    // As @openrouter/sdk's activity method reads it.
    const read = activityResponseFromJSON(JSON.stringify({ data: rows }));
    expect(read.ok, read.ok ? "" : String(read.error)).toBe(true);
    expect(read.ok && read.value.data[0]).toMatchObject({ endpointId: "vendor:chat-1", byokUsageInference: 0.004 });
  });

  it("keeps to the caller's organization", async () => {
    const rows = await activity(db, other, {}, now);
    expect(rows).toEqual([expect.objectContaining({ usage: 9, requests: 1 })]);
  });

  it("filters by day, key and workspace, and splits per workspace when asked", async () => {
    const day = await activity(db, organization, { date: "2026-03-13" }, now);
    expect(day.map((r) => r.model)).toEqual(["vendor/voice"]);
    const bobs = await activity(db, organization, { api_key_hash: bob }, now);
    expect(bobs).toEqual([expect.objectContaining({ usage: 0.003, requests: 1 })]);
    const inResearch = await activity(db, organization, { workspace_id: research }, now);
    expect(inResearch).toEqual([expect.objectContaining({ usage: 0.003 })]);
    const split = await activity(db, organization, { date: "2026-03-14", group_by: "workspace" }, now);
    const read = activityResponseFromJSON(JSON.stringify({ data: split }));
    expect(read.ok && read.value.data.every((r) => r.workspaceId !== undefined)).toBe(true);
    const chat = split.filter((r) => r.model === "vendor/chat");
    expect(chat.map((r) => [r.workspace_id, r.usage]).sort()).toEqual([[research, 0.003], [workspace, 0.502]].sort());
  });

  it("refuses a day outside the last 30 completed ones, naming them", async () => {
    for (const date of ["2026-03-15", "2026-02-12"]) {
      const error = await refusal(activity(db, organization, { date }, now));
      expect(error).toBeInstanceOf(HttpError);
      expect(error.message).toBe("Invalid query: date: must be one of the last 30 completed UTC days, 2026-02-13 to 2026-03-14");
    }
  });
});

describe("daily activity", () => {
  it("counts every generation of a range per day, failures included, with their median time", async () => {
    const rows = await dailyActivity(db, organization, { from: "2026-03-13", to: "2026-03-15" });
    expect(rows).toEqual([
      expect.objectContaining({ date: "2026-03-13", group: null, requests: 1, errors: 0, usage: 0.001, p50_generation_time_ms: expect.any(Number) }),
      expect.objectContaining({ date: "2026-03-14", group: null, requests: 6, errors: 1, usage: 0.5051, byok_usage: 0.004, prompt_tokens: 600 }),
      expect.objectContaining({ date: "2026-03-15", group: null, requests: 1, usage: 0.03 }),
    ]);
    // Every generation took 500 ms: the median is within 12% of it.
    for (const row of rows) expect(Math.abs(row.p50_generation_time_ms! - 500) / 500).toBeLessThan(0.12);
    // Two of four took 100 ms: the median is the first time that half of them reached.
    const [skewed] = await dailyActivity(db, organization, { from: "2026-03-10", to: "2026-03-10", group_by: "model" });
    expect(skewed).toMatchObject({ group: "vendor/timed", requests: 4 });
    expect(Math.abs(skewed!.p50_generation_time_ms! - 100) / 100).toBeLessThan(0.12);
  });

  it("splits by model, key or workspace, and filters by key and model", async () => {
    const byModel = await dailyActivity(db, organization, { from: "2026-03-14", to: "2026-03-14", group_by: "model" });
    expect(byModel.map((r) => [r.group, r.requests])).toEqual([["vendor/chat", 5], ["vendor/embed", 1]]);
    expect(byModel.every((r) => r.p50_generation_time_ms !== null)).toBe(true);
    const byKey = await dailyActivity(db, organization, { from: "2026-03-14", to: "2026-03-14", group_by: "key" });
    expect(byKey.map((r) => [r.group, r.requests, r.p50_generation_time_ms])).toEqual([[alice, 5, null], [bob, 1, null]]);
    const byWorkspace = await dailyActivity(db, organization, { from: "2026-03-14", to: "2026-03-14", group_by: "workspace" });
    expect(byWorkspace.map((r) => r.group).sort()).toEqual([research, workspace].sort());
    const filtered = await dailyActivity(db, organization, { from: "2026-03-01", to: "2026-03-15", api_key_hash: alice, model: "vendor/embed" });
    expect(filtered.map((r) => [r.date, r.requests])).toEqual([["2026-03-14", 1]]);
  });
});
