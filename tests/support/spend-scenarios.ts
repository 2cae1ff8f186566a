import { randomUUID } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { expect } from "vitest";
import { eventually } from "./eventually.js";
import { chargeEvent } from "./identity-keys.js";
import type { FakeProvider } from "./fake-provider.js";
import type { TestGateway } from "./gateway.js";

/** What the spend scenarios need of a running gateway, whatever its topology. */
export interface SpendDriver {
  /** Calls the API; `key` defaults to a management key. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: Record<string, unknown> & { error?: { message: string } } }>;
  /** Requests the fake provider has received for an upstream model name. */
  upstreamCalls(model: string): number;
  /** How long settled usage may take to show (it travels by event). */
  usageWithinMs: number;
  /** Runs a burst of `count` chat requests; a topology may check where they went. */
  burst<T>(count: number, run: () => Promise<T>): Promise<T>;
}

const messages = [{ role: "user", content: "Say hello" }];

/** The driver of a gateway running in this process. */
export const gatewayDriver = (gw: TestGateway, upstream: FakeProvider): SpendDriver => ({
  call: (method, path, body, key) => gw.call(method, path, { ...(body === undefined ? {} : { body }), ...(key ? { key } : {}) }),
  upstreamCalls: (model) => upstream.requests.filter((r) => r.body.model === model).length,
  usageWithinMs: 10_000,
  burst: (_count, run) => run(),
});

export function spendHelpers(d: SpendDriver) {
  const data = (answer: { body: Record<string, unknown> }) => answer.body.data as Record<string, unknown>;
  const newKey = async (body: Record<string, unknown> = {}) => {
    const created = await d.call("POST", "/keys", { name: "spender", ...body });
    expect(created.status).toBe(201);
    return { key: String(created.body.key), hash: String(data(created).hash) };
  };
  const chat = (key: string, model: string, extra: Record<string, unknown> = {}) => d.call("POST", "/chat/completions", { model, messages, ...extra }, key);
  const keyRecord = async (hash: string) => data(await d.call("GET", `/keys/${hash}`)) as Record<string, number | null>;
  const usageReaches = (hash: string, usd: number) => eventually(async () => (await keyRecord(hash)).usage === usd, d.usageWithinMs);
  return { data, newKey, chat, keyRecord, usageReaches };
}

/** A key with $0.10 of $1.00 left gets 50 concurrent requests whose worst case is $0.01: ten reach the provider. */
export async function keyLimitUnderConcurrency(d: SpendDriver): Promise<void> {
  const { newKey, chat, keyRecord, usageReaches } = spendHelpers(d);
  const { key, hash } = await newKey({ limit: 1 });
  expect((await chat(key, "spend/ninety-cents")).status).toBe(200);
  await usageReaches(hash, 0.9);
  expect((await keyRecord(hash)).limit_remaining).toBe(0.1);

  const before = d.upstreamCalls("cent");
  const answers = await d.burst(50, () => Promise.all(Array.from({ length: 50 }, () => chat(key, "spend/cent"))));
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(10);
  // Refused: 402 while the last holds are unsettled, 403 once settled spend has reached the limit.
  expect(statuses.filter((s) => s === 402 || s === 403)).toHaveLength(40);
  expect(d.upstreamCalls("cent") - before).toBe(10);
  // A price per request: the 402 speaks of dollars, since fewer max_tokens would not help.
  for (const refused of answers.filter((a) => a.status === 402)) expect(refused.body.error?.message).toMatch(/it can cost up to \$0\.01, but only \$[\d.]+ remains\./);

  await usageReaches(hash, 1);
  expect(await keyRecord(hash)).toMatchObject({ usage: 1, usage_daily: 1, usage_weekly: 1, usage_monthly: 1, limit_remaining: 0 });
  const exhausted = await chat(key, "spend/cent");
  expect(exhausted.status).toBe(403);
  expect(exhausted.body.error?.message).toBe("Key limit exceeded");
  expect(spendHelpers(d).data(await d.call("GET", "/key", undefined, key))).toMatchObject({ usage: 1, limit: 1, limit_remaining: 0 });
}

/** A changed limit binds the very next request, also of a key that had none (and was remembered as such). */
export async function changedLimitBindsNextRequest(d: SpendDriver): Promise<void> {
  const { newKey, chat, usageReaches } = spendHelpers(d);
  const { key, hash } = await newKey({ limit: 0.005 });
  expect((await chat(key, "spend/cent")).status).toBe(402);
  expect((await d.call("PATCH", `/keys/${hash}`, { limit: 0.02 })).status).toBe(200);
  expect((await chat(key, "spend/cent")).status).toBe(200);
  await usageReaches(hash, 0.01);
  expect((await d.call("PATCH", `/keys/${hash}`, { limit: 0.01 })).status).toBe(200);
  expect((await chat(key, "spend/cent")).status).toBe(403);
  const open = await newKey();
  expect((await chat(open.key, "spend/cent")).status).toBe(200);
  expect((await d.call("PATCH", `/keys/${open.hash}`, { limit: 0.005 })).status).toBe(200);
  // 402 while the first request's hold waits for its charge, 403 once it is settled: refused either way.
  expect([402, 403]).toContain((await chat(open.key, "spend/cent")).status);
}

/**
 * A limit set on a key that had none, while one of its requests waits on the provider: that request's
 * hold counts, so the next request gets only what is left.
 */
export async function limitCountsRequestsInFlight(d: SpendDriver, apiUrl: string): Promise<void> {
  const { newKey, chat } = spendHelpers(d);
  const { key, hash } = await newKey();
  expect((await chat(key, "spend/cent")).status).toBe(200);
  const stalled = d.upstreamCalls("stall");
  const aborter = new AbortController();
  const res = await fetch(`${apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "spend/stalling", messages, stream: true }),
    signal: aborter.signal,
  });
  expect(res.status).toBe(200);
  void res.body?.pipeTo(new WritableStream()).catch(() => {});
  try {
    // The provider has the request, so its hold is in place.
    await eventually(async () => d.upstreamCalls("stall") > stalled, 10_000);
    expect((await d.call("PATCH", `/keys/${hash}`, { limit: 0.025 })).status).toBe(200);
    // $0.01 spent (or still held) and $0.01 held by the stalled request: $0.005 is left.
    const refused = await chat(key, "spend/cent");
    expect(refused.status).toBe(402);
    expect((refused.body.error as { metadata?: unknown }).metadata).toMatchObject({ limited_by: "key", remaining_usd: 0.005 });
  } finally {
    aborter.abort();
  }
}

/**
 * Credits of $0.05 more than the organization spent bind every key of it: of 50 concurrent requests of two
 * unlimited keys, five reach the provider.
 */
export async function creditsUnderConcurrency(d: SpendDriver): Promise<void> {
  const { data, newKey, chat } = spendHelpers(d);
  const credits = async (key?: string) => data(await d.call("GET", "/credits", undefined, key)) as { total_credits: number; total_usage: number };
  const [a, b] = [await newKey(), await newKey()];
  const spent = (await credits()).total_usage;
  const limit = Number((spent + 0.05).toFixed(10));
  const set = await d.call("PUT", "/credits", { total_credits: limit });
  expect(set.status).toBe(200);
  expect(set.body.data).toEqual({ total_credits: limit, total_usage: spent });

  const before = d.upstreamCalls("cent");
  const answers = await d.burst(50, () => Promise.all(Array.from({ length: 50 }, (_, i) => chat(i % 2 ? a.key : b.key, "spend/cent"))));
  expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
  const refused = answers.filter((r) => r.status === 402);
  expect(refused).toHaveLength(45);
  expect(refused[0]!.body.error?.message).toContain("The organization's credits limit it; the operator can raise them (PUT /api/v1/credits).");
  expect(d.upstreamCalls("cent") - before).toBe(5);

  await eventually(async () => (await credits()).total_usage >= limit, d.usageWithinMs);
  expect(await credits(a.key)).toEqual({ total_credits: limit, total_usage: limit });
  const exhausted = await chat(a.key, "spend/cent");
  expect(exhausted.status).toBe(402);
  expect(exhausted.body.error?.message).toMatch(/but only \$0 remains\. The organization's credits/);
}

/** A $0.05 daily guardrail budget shared by two keys, under 50 concurrent requests: five reach the provider. */
export async function guardrailBudgetUnderConcurrency(d: SpendDriver): Promise<void> {
  const { data, newKey, chat, keyRecord } = spendHelpers(d);
  const guardrail = await d.call("POST", "/guardrails", { name: "five cents a day", limit_usd: 0.05, reset_interval: "daily" });
  expect(guardrail.status).toBe(201);
  const id = String(data(guardrail).id);
  const [a, b] = [await newKey(), await newKey()];
  expect((await d.call("POST", `/guardrails/${id}/assignments/keys`, { key_hashes: [a.hash, b.hash] })).status).toBe(200);

  const before = d.upstreamCalls("cent");
  const answers = await d.burst(50, () => Promise.all(Array.from({ length: 50 }, (_, i) => chat(i % 2 ? a.key : b.key, "spend/cent"))));
  // Each key has the whole budget to itself, as OpenRouter's guardrail budgets bind each key: five requests each.
  expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
  // Refused while the budget is held (402), or once its spend is settled (403, used up until it resets).
  const refused = answers.filter((r) => r.status === 402 || r.status === 403);
  expect(refused).toHaveLength(40);
  expect(refused[0]?.body.error?.message).toContain(`guardrail ${id}`);
  expect(d.upstreamCalls("cent") - before).toBe(10);

  for (const { hash } of [a, b]) {
    await eventually(async () => ((await keyRecord(hash)).usage ?? 0) >= 0.05, d.usageWithinMs);
    expect(Number(((await keyRecord(hash)).usage ?? 0).toFixed(12))).toBe(0.05);
  }
  // Settled, the key's budget is used up: a 403 until it resets.
  const after = await chat(a.key, "spend/cent");
  expect(after.status).toBe(403);
  expect(after.body.error?.message).toContain(`budget of guardrail ${id} is used up`);
  // A key assigned now has the whole budget too.
  const c = await newKey();
  expect((await d.call("POST", `/guardrails/${id}/assignments/keys`, { key_hashes: [c.hash] })).status).toBe(200);
  expect((await chat(c.key, "spend/cent")).status).toBe(200);
  await eventually(async () => ((await keyRecord(c.hash)).usage ?? 0) >= 0.01, d.usageWithinMs);
  await d.call("DELETE", `/guardrails/${id}`);
}

/**
 * Publishes charges straight to NATS: one event twice under new message ids (a redelivery after a crash
 * between commit and ack, or a publish retried after the deduplication window), the same generation under a
 * new event id, then a sentinel charge. Usage must count each generation once.
 */
export async function chargesOnceHoweverDelivered(d: SpendDriver, nats: { url: string; namespace: string }): Promise<void> {
  const { data, newKey, keyRecord } = spendHelpers(d);
  const { key, hash } = await newKey();
  const me = data(await d.call("GET", "/key", undefined, key));
  const charge = (generationId: string, cost: string) =>
    chargeEvent({ generation_id: generationId, key_hash: hash, organization_id: String(me.organization_id), workspace_id: String(me.workspace_id) }, cost);
  const nc = await connect({ servers: nats.url });
  try {
    const js = jetstream(nc);
    const send = (event: EventEnvelope) => js.publish(`${nats.namespace}.${event.subject}`, JSON.stringify(event), { msgID: randomUUID() });
    const first = charge(`gen-fault-${randomUUID()}`, "0.05");
    await send(first);
    await send(first);
    await send({ ...charge(first.data.generation_id, "0.05"), id: randomUUID() });
    // Once the sentinel is applied, the duplicates published before it have been handled.
    await send(charge(`gen-fault-${randomUUID()}`, "0.01"));
    const usage = async () => (await keyRecord(hash)).usage ?? 0;
    await eventually(async () => (await usage()) >= 0.06, d.usageWithinMs * 2);
    expect(await usage()).toBe(0.06);
  } finally {
    await nc.close();
  }
}
