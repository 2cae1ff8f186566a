import { Writable } from "node:stream";
import type { EventEnvelope } from "@switchyard/contracts";
import { createLogger, createMemoryBus, metrics, migrate, openPglite, outboxSink, startOutboxRelay, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations, schema } from "../migrations.js";
import { createRecorder } from "./recorder.js";
import type { FinishedGeneration } from "./store.js";

const logger = createLogger({ service: "test", level: "silent" });
let db: Db;
let writes = 0;

const generation = (id: string): FinishedGeneration => ({
  id,
  keyHash: "a".repeat(64),
  organizationId: "00000000-0000-4000-8000-000000000001",
  workspaceId: "00000000-0000-4000-8000-000000000002",
  guardrailIds: [],
  contentFilters: [],
  presetId: null,
  broadcast: false,
  isByok: false,
  attribution: { externalUser: null, metadata: null, httpReferer: null, appTitle: null, userAgent: null },
  requestId: null,
  sessionId: null,
  model: "vendor/model",
  requestedModel: "vendor/model",
  provider: "alpha",
  upstreamId: null,
  status: "completed",
  streamed: false,
  finishReason: "stop",
  nativeFinishReason: "stop",
  promptTokens: 10,
  completionTokens: 5,
  reasoningTokens: 0,
  cachedTokens: 0,
  usageEstimated: false,
  charge: { charged: 123_000_000n, reported: 123_000_000n },
  latencyMs: null,
  generationTimeMs: 3,
  serviceTier: null,
  dataRegion: "us",
  attempts: [{ provider: "alpha", model: "vendor/model", status: 200, latencyMs: 2 }],
  excluded: [],
});

beforeAll(async () => {
  const real = await openPglite();
  await migrate(real, schema, migrations);
  // The real database, with its statements that write generations counted.
  db = { ...real, query: (text, params) => (text.includes("INSERT INTO inference.generations") && writes++, real.query(text, params)) };
});
afterAll(() => db.close());

/** Generation records the recorder gave up on, as its metric counts them. */
const droppedRecords = async () => (await metrics.generationRecordsDropped.get()).values.reduce((sum, v) => sum + v.value, 0);
const rows = async () => Number((await db.query<{ n: string }>("SELECT count(*)::text AS n FROM inference.generations"))[0]!.n);

describe("generation recorder", () => {
  // Each recorded generation writes every index of its table, and a generation is read by its id alone.
  it("writes generations under their primary key alone", async () => {
    const indexes = await db.query<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND tablename = 'generations'", [schema]);
    expect(indexes.map((index) => index.name)).toEqual(["generations_pkey"]);
  });

  it("writes a batch of finished generations and their events in one statement, readable while queued", async () => {
    const bus = createMemoryBus({ logger });
    const events: EventEnvelope[] = [];
    await bus.consume("test_batch", ["inference.generation.completed.v1"], async (event) => void events.push(event));
    const relay = startOutboxRelay({ db, schema, bus, logger });
    const recorder = createRecorder({ db, events: outboxSink(schema, relay), logger, flushMs: 50, stats: { served: () => undefined } });
    const before = writes;
    for (let i = 0; i < 30; i++) recorder.record(generation(`gen-batch-${i}`));
    expect(recorder.pending("gen-batch-7")?.generation.charge.charged).toBe(123_000_000n);
    await recorder.stop();
    expect(writes - before).toBe(1);
    expect(await rows()).toBe(30);
    const [stored] = await db.query<{ cost: string; attempts: unknown }>("SELECT cost_usd::text AS cost, attempts FROM inference.generations WHERE id = 'gen-batch-7'");
    expect(stored).toEqual({ cost: "0.000123000000", attempts: generation("x").attempts });
    expect(recorder.pending("gen-batch-7")).toBeUndefined();
    relay.wake();
    await relay.stop();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events.map((e) => (e.data as { generation_id: string }).generation_id).sort()).toEqual(
      Array.from({ length: 30 }, (_, i) => `gen-batch-${i}`).sort(),
    );
    expect(events[0]?.data).toMatchObject({ cost_usd: "0.000123", prompt_tokens: 10, completion_tokens: 5 });
  });

  it("keeps a batch queued while the database refuses it, and writes it once it is back", async () => {
    const bus = createMemoryBus({ logger });
    const relay = startOutboxRelay({ db, schema, bus, logger });
    const recorder = createRecorder({ db, events: outboxSink(schema, relay), logger, flushMs: 5, stats: { served: () => undefined } });
    const before = await rows();
    await db.query("ALTER TABLE inference.generations RENAME TO generations_away");
    recorder.record(generation("gen-retry-1"));
    recorder.record(generation("gen-retry-2"));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(recorder.pending("gen-retry-1")).toBeDefined();
    await db.query("ALTER TABLE inference.generations_away RENAME TO generations");
    await recorder.stop();
    expect(await rows()).toBe(before + 2);
    await relay.stop();
  });

  it("writes the rest of a batch when rows of it cannot be written, and drops only those, with an error naming each", async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString("utf8")), done()) });
    const logs = createLogger({ service: "test", level: "error", destination: sink });
    const bus = createMemoryBus({ logger });
    const relay = startOutboxRelay({ db, schema, bus, logger });
    const recorder = createRecorder({ db, events: outboxSink(schema, relay), logger: logs, flushMs: 5, stats: { served: () => undefined } });
    const before = await rows();
    const dropped = await droppedRecords();
    recorder.record(generation("gen-split-1"));
    // One its event refuses (before the statement), one Postgres refuses (a latency past its integer column).
    recorder.record({ ...generation("gen-split-bad"), charge: { charged: -5n, reported: -5n } });
    recorder.record(generation("gen-split-2"));
    recorder.record({ ...generation("gen-split-huge"), latencyMs: 2 ** 40 });
    recorder.record(generation("gen-split-3"));
    await recorder.stop();
    expect(await rows()).toBe(before + 3);
    const written = await db.query<{ id: string }>("SELECT id FROM inference.generations WHERE id LIKE 'gen-split-%' ORDER BY id");
    expect(written.map((r) => r.id)).toEqual(["gen-split-1", "gen-split-2", "gen-split-3"]);
    expect(recorder.pending("gen-split-bad")).toBeUndefined();
    expect(recorder.pending("gen-split-huge")).toBeUndefined();
    expect(lines.filter((line) => line.includes('"level":50')).map((line) => (JSON.parse(line) as { generationId: string }).generationId)).toEqual(["gen-split-bad", "gen-split-huge"]);
    expect((await droppedRecords()) - dropped).toBe(2);
    await relay.stop();
  });

  it("goes on past a record written already, as when a commit's answer was lost, and writes it once", async () => {
    const bus = createMemoryBus({ logger });
    const relay = startOutboxRelay({ db, schema, bus, logger });
    const first = createRecorder({ db, events: outboxSink(schema, relay), logger, flushMs: 5, stats: { served: () => undefined } });
    first.record(generation("gen-twice"));
    await first.stop();
    const before = await rows();
    // The retry of a batch that committed: its rows are there, and records queued after it must not wait behind them.
    const retry = createRecorder({ db, events: outboxSink(schema, relay), logger, flushMs: 5, stats: { served: () => undefined } });
    retry.record(generation("gen-twice"));
    retry.record(generation("gen-after-twice"));
    await retry.stop();
    expect(await rows()).toBe(before + 1);
    expect(retry.pending("gen-after-twice")).toBeUndefined();
    await relay.stop();
  });

  it("keeps a record queued while no row of its writes goes in, and drops it once others do", async () => {
    const bus = createMemoryBus({ logger });
    const relay = startOutboxRelay({ db, schema, bus, logger });
    const recorder = createRecorder({ db, events: outboxSink(schema, relay), logger, flushMs: 5, stats: { served: () => undefined } });
    const dropped = await droppedRecords();
    // Alone, its refusal may be the database's (a column a migration has not added yet): it waits.
    recorder.record({ ...generation("gen-alone-huge"), latencyMs: 2 ** 40 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(recorder.pending("gen-alone-huge")).toBeDefined();
    expect((await droppedRecords()) - dropped).toBe(0);
    recorder.record(generation("gen-alone-good"));
    await recorder.stop();
    expect(recorder.pending("gen-alone-huge")).toBeUndefined();
    const written = await db.query<{ id: string }>("SELECT id FROM inference.generations WHERE id LIKE 'gen-alone-%'");
    expect(written.map((r) => r.id)).toEqual(["gen-alone-good"]);
    expect((await droppedRecords()) - dropped).toBe(1);
    await relay.stop();
  });

  it("counts a generation for its endpoint once the caller's answer is written, and what is left when it stops", async () => {
    const bus = createMemoryBus({ logger });
    const relay = startOutboxRelay({ db, schema, bus, logger });
    const served: string[] = [];
    const stats = { served: (provider: string, model: string) => void served.push(`${provider} ${model}`) };
    const recorder = createRecorder({ db, events: outboxSink(schema, relay), logger, flushMs: 5, stats });
    recorder.record(generation("gen-counted-later"));
    // The caller sends its answer right after `record` returns, in the same turn of the event loop.
    expect(served).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(served).toEqual(["alpha vendor/model"]);
    recorder.record(generation("gen-counted-at-stop"));
    await recorder.stop();
    expect(served).toEqual(["alpha vendor/model", "alpha vendor/model"]);
    await relay.stop();
  });
});
