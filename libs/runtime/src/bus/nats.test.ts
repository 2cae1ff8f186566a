import { randomBytes, randomUUID } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";
import { jetstream, jetstreamManager, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEvent } from "../../../../tests/support/events.js";
import { startTestNats, type TestNats } from "../../../../tests/support/nats.js";
import { migrate } from "../db/migrate.js";
import { openPglite } from "../db/pglite.js";
import type { Db } from "../db/types.js";
import { silentLogger, type Logger } from "../log.js";
import { connectNatsBus, natsNames } from "./nats.js";
import { consumeOnce, enqueueEvent, outboxMigrations, startOutboxRelay } from "./outbox.js";
import type { Bus } from "./types.js";

let nats: TestNats;
let admin: NatsConnection;
let jsm: JetStreamManager;
let db: Db;
const buses: Bus[] = [];
const namespaces: string[] = [];
const data = { hash: "h", organization_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b01", workspace_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b02" };

/** Every test gets its own namespace, so streams and consumers never collide on a shared server. */
const namespace = () => {
  const ns = `t${randomBytes(5).toString("hex")}`;
  namespaces.push(ns);
  return ns;
};
const open = async (ns: string, options: { url?: string; logger?: Logger } = {}) => {
  const bus = await connectNatsBus({ url: options.url ?? nats.url, namespace: ns, logger: options.logger ?? silentLogger(), name: "bus-test" });
  buses.push(bus);
  return bus;
};
const until = async (check: () => boolean | Promise<boolean>, ms = 10_000, what = "condition") => {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const captureLogs = () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
};

beforeAll(async () => {
  nats = await startTestNats();
  admin = await connect({ servers: nats.url });
  jsm = await jetstreamManager(admin);
  db = await openPglite();
  await migrate(db, "bus_nats", [...outboxMigrations("bus_nats"), { id: "001_effects", sql: "CREATE TABLE bus_nats.effects (event_id uuid)" }]);
});
afterAll(async () => {
  await Promise.all(buses.map((b) => b.close().catch(() => undefined)));
  // Leave a shared server as it was: remove every stream these tests made.
  for (const ns of namespaces) await jsm?.streams.delete(natsNames(ns).stream("identity")).catch(() => undefined);
  await admin?.close();
  await db?.close();
  await nats?.stop();
});

describe("NATS JetStream bus", () => {
  it("delivers published events to a durable consumer, once per event id, from a namespaced file stream", async () => {
    const ns = namespace();
    const bus = await open(ns);
    const got: EventEnvelope[] = [];
    await bus.consume("test_basic", ["identity.api_key.>"], async (e) => void got.push(e));
    const event = keyEvent("one");
    await bus.publish(event);
    await bus.publish(event); // the same id again: JetStream drops the duplicate
    await bus.publish(keyEvent("two"));
    await until(() => got.length >= 2);
    await pause(200);
    expect(got.map((e) => (e.data as { hash: string }).hash)).toEqual(["one", "two"]);
    expect(got[0]).toEqual(event);

    const info = await jsm.streams.info(`${ns}_IDENTITY`);
    expect(info.config).toMatchObject({ subjects: [`${ns}.identity.>`], storage: StorageType.File, max_age: 7 * 24 * 3600 * 1e9 });
    expect(info.state.messages).toBe(2);
    expect((await jsm.consumers.info(info.config.name, `${ns}_test_basic`)).config.filter_subject).toBe(`${ns}.identity.api_key.>`);
    expect(bus.healthy()).toBe(true);
  });

  it("redelivers after a failure and parks after maxDeliveries, with a log line naming the event", async () => {
    const { logger, lines } = captureLogs();
    const bus = await open(namespace(), { logger });
    let flaky = 0;
    await bus.consume("test_flaky", ["identity.api_key.>"], async () => {
      if (++flaky < 2) throw new Error("transient");
    });
    let poison = 0;
    await bus.consume("test_poison", ["identity.api_key.>"], async () => {
      poison++;
      throw new Error("always");
    }, { maxDeliveries: 2 });
    const event = keyEvent();
    await bus.publish(event);
    await until(() => flaky >= 2 && bus.parkedCount() === 1);
    await pause(1500); // a parked event is not delivered again
    expect(flaky).toBe(2);
    expect(poison).toBe(2);
    expect(bus.parkedCount()).toBe(1);
    expect(lines.find((l) => String(l.msg).includes("parked"))).toMatchObject({ level: 50, subject: event.subject, eventId: event.id, consumer: "test_poison" });
  });

  it("publishes a batch in order without waiting for each acknowledgement, and a batch sent again adds nothing", async () => {
    const bus = await open(namespace());
    const got: string[] = [];
    await bus.consume("test_publish_all", ["identity.api_key.>"], async (e) => void got.push(e.id));
    const batch = Array.from({ length: 40 }, (_, i) => keyEvent(`p${i}`));
    await bus.publishAll!(batch);
    await bus.publishAll!(batch.slice(10, 20)); // as after a failure: the ones that arrived are duplicates
    await until(() => got.length >= 40);
    await pause(300);
    expect(got).toEqual(batch.map((e) => e.id));
  });

  it("hands a batch consumer the events that arrived together, and one that fails its batch alone", async () => {
    const bus = await open(namespace());
    const poisoned = keyEvent("poison");
    const events = Array.from({ length: 60 }, (_, i) => (i === 30 ? poisoned : keyEvent(`k${i}`)));
    const batches: number[] = [];
    const applied: string[] = [];
    let poisonTries = 0;
    // The events are waiting before the consumer starts, so they arrive together.
    for (const event of events) await bus.publish(event);
    await bus.consumeBatches(
      "test_batches",
      ["identity.api_key.>"],
      async (batch) => {
        batches.push(batch.length);
        if (batch.some((e) => e.id === poisoned.id)) {
          poisonTries++;
          throw new Error("poison in the batch");
        }
        applied.push(...batch.map((e) => e.id));
      },
      { maxDeliveries: 2 },
    );
    await until(() => applied.length === 59 && bus.parkedCount() === 1, 10_000, "every good event applied, the poison parked");
    expect(new Set(applied).size).toBe(59);
    expect(applied).not.toContain(poisoned.id);
    expect(Math.max(...batches)).toBeGreaterThan(1);
    expect(poisonTries).toBe(3); // its batch, then alone twice (maxDeliveries)
  });

  it("parks a message that does not parse instead of retrying it", async () => {
    const { logger, lines } = captureLogs();
    const ns = namespace();
    const bus = await open(ns, { logger });
    const got: string[] = [];
    await bus.consume("test_garbage", ["identity.api_key.>"], async (e) => void got.push(e.id));
    const junkId = randomUUID();
    await jetstream(admin).publish(`${ns}.identity.api_key.updated.v1`, "{not json", { msgID: junkId });
    const good = keyEvent();
    await bus.publish(good);
    await until(() => got.length === 1 && bus.parkedCount() === 1);
    await pause(500);
    expect(got).toEqual([good.id]);
    expect(bus.parkedCount()).toBe(1);
    expect(lines.find((l) => String(l.msg).includes("parked"))).toMatchObject({ subject: "identity.api_key.updated.v1", eventId: junkId, consumer: "test_garbage" });
  });

  it("makes one durable consumer per subject when given several", async () => {
    const ns = namespace();
    const bus = await open(ns);
    const got: string[] = [];
    await bus.consume("test_multi", ["identity.api_key.>", "identity.workspace.*.v1"], async (e) => void got.push(e.subject));
    await bus.publish(keyEvent());
    const workspace = { id: randomUUID(), organization_id: randomUUID(), default_guardrail_id: randomUUID() };
    await bus.publish({ id: randomUUID(), subject: "identity.workspace.created.v1", occurred_at: new Date().toISOString(), data: workspace });
    await until(() => got.length >= 2);
    expect(got.sort()).toEqual(["identity.api_key.updated.v1", "identity.workspace.created.v1"]);
    const consumers: string[] = [];
    for await (const c of jsm.consumers.list(natsNames(ns).stream("identity"))) consumers.push(c.name);
    expect(consumers.sort()).toEqual([`${ns}_test_multi-identity_api_key_all`, `${ns}_test_multi-identity_workspace_any_v1`]);
  });

  it("shares one durable consumer between processes, applying effects once despite redeliveries", async () => {
    const ns = namespace();
    const [a, b] = [await open(ns), await open(ns)];
    const handledBy: string[] = [];
    const failedOnce = new Set<string>();
    const handler = (who: string) => async (e: EventEnvelope) => {
      // Some first deliveries fail after the effect committed, so the retry may land on the other process.
      await consumeOnce(db, "bus_nats", "test_shared", e, async (tx) => {
        await tx.query("INSERT INTO bus_nats.effects (event_id) VALUES ($1)", [e.id]);
      });
      handledBy.push(who);
      if ((e.data as { hash: string }).hash === "fail-once" && !failedOnce.has(e.id)) {
        failedOnce.add(e.id);
        throw new Error("lost ack");
      }
    };
    const subA = await a.consume("test_shared", ["identity.api_key.>"], handler("a"));
    await b.consume("test_shared", ["identity.api_key.>"], handler("b"));
    const events = Array.from({ length: 20 }, (_, i) => keyEvent(i % 4 === 0 ? "fail-once" : "ok"));
    for (const e of events) await a.publish(e);
    const effects = async () => (await db.query<{ n: number }>("SELECT count(DISTINCT event_id)::int AS n FROM bus_nats.effects"))[0]?.n ?? 0;
    const rows = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM bus_nats.effects"))[0]?.n ?? 0;
    await until(async () => (await effects()) === 20, 15_000, "20 effects");

    // With one process gone, the other takes all of the shared consumer's work.
    await subA.stop();
    const before = handledBy.filter((w) => w === "b").length;
    const later = Array.from({ length: 5 }, () => keyEvent("later"));
    for (const e of later) await a.publish(e);
    await until(async () => (await effects()) === 25, 15_000, "25 effects");
    // Wait for the redeliveries of the failed acks too: they must find their effects already applied.
    await until(() => handledBy.length >= 25 + failedOnce.size, 15_000, "redeliveries");
    await pause(300);
    expect(await rows()).toBe(25);
    expect(handledBy.filter((w) => w === "b").length - before).toBeGreaterThanOrEqual(5);
  });

  it("fans listened events out to every process, from now on, despite a failing listener", async () => {
    const ns = namespace();
    const [a, b] = [await open(ns), await open(ns)];
    await a.publish(keyEvent("before")); // not heard: listeners start from now on
    const heard = { a: 0, b: 0 };
    await a.listen(["identity.api_key.>"], async () => void heard.a++);
    await b.listen(["*.api_key.updated.v1"], async () => void heard.b++);
    await b.listen(["identity.>"], async () => {
      throw new Error("listener bug");
    });
    for (let i = 0; i < 10; i++) await a.publish(keyEvent());
    await until(() => heard.a >= 10 && heard.b >= 10);
    await pause(200);
    expect(heard).toEqual({ a: 10, b: 10 });
  });

  it("recreates its stream and consumer when they disappear from the server", async () => {
    const ns = namespace();
    const bus = await open(ns);
    const got: string[] = [];
    await bus.consume("test_recreate", ["identity.api_key.>"], async (e) => void got.push(e.id));
    const first = keyEvent();
    await bus.publish(first);
    await until(() => got.includes(first.id));
    await jsm.streams.delete(natsNames(ns).stream("identity"));
    const second = keyEvent();
    await until(async () => bus.publish(second).then(() => true, () => false), 10_000, "publish after stream deletion");
    await until(() => got.includes(second.id), 15_000, "delivery to the recreated consumer");
  });

  it("keeps events in the outbox through a NATS outage and delivers them after it", async () => {
    const own = await startTestNats({ private: true });
    const schema = "bus_outage";
    try {
      const bus = await open(namespace(), { url: own.url });
      const got: string[] = [];
      await bus.consume("test_outage", ["identity.api_key.>"], async (e) => void got.push(e.id));
      await migrate(db, schema, outboxMigrations(schema));
      const relay = startOutboxRelay({ db, schema, bus, logger: silentLogger(), pollMs: 50 });
      const enqueue = () => db.transaction((tx) => enqueueEvent(tx, schema, "identity.api_key.updated.v1", data));
      const first = await enqueue();
      relay.wake();
      await until(() => got.includes(first.id));

      await own.kill!();
      await until(() => !bus.healthy());
      const during = [await enqueue(), await enqueue(), await enqueue()];
      relay.wake();
      await until(async () => {
        const [row] = await db.query<{ attempts: number; last_error: string | null }>(`SELECT attempts, last_error FROM ${schema}.outbox WHERE id = $1`, [during[0]!.id]);
        return (row?.attempts ?? 0) >= 1 && row?.last_error !== null;
      }, 20_000, "a failed publish attempt to be recorded");
      const waiting = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox WHERE published_at IS NULL`);
      expect(waiting[0]?.n).toBe(3);

      await own.restart!();
      await until(() => bus.healthy(), 15_000, "reconnect");
      relay.wake();
      await until(() => during.every((e) => got.includes(e.id)), 30_000, "delivery after the outage");
      expect(got.filter((id) => during.some((e) => e.id === id))).toEqual(during.map((e) => e.id));
      await relay.stop();
      await bus.close();
      expect(bus.healthy()).toBe(false);
    } finally {
      await own.stop();
    }
  }, 60_000);

  it("starts while NATS is unreachable and sets up its consumers and listeners once it answers", async () => {
    const own = await startTestNats({ private: true });
    await own.kill!();
    const schema = "bus_late";
    const { logger, lines } = captureLogs();
    try {
      const started = Date.now();
      const bus = await connectNatsBus({ url: own.url, namespace: namespace(), logger, name: "bus-test", retry: { initialDelayMs: 50, maxDelayMs: 500 } });
      buses.push(bus);
      expect(bus.healthy()).toBe(false);
      const consumed: string[] = [];
      const heard: string[] = [];
      await bus.consume("test_late", ["identity.api_key.>"], async (e) => void consumed.push(e.id));
      await bus.listen(["identity.api_key.>"], async (e) => void heard.push(e.id));
      // Generous: one refused connection and two deferred registrations, nowhere near a connect timeout.
      expect(Date.now() - started).toBeLessThan(4_000);
      await expect(bus.publish(keyEvent())).rejects.toThrow(/has not answered yet/);

      // Events written meanwhile wait in the outbox.
      await migrate(db, schema, outboxMigrations(schema));
      const relay = startOutboxRelay({ db, schema, bus, logger: silentLogger(), pollMs: 50 });
      const waiting = await db.transaction((tx) => enqueueEvent(tx, schema, "identity.api_key.updated.v1", data));
      relay.wake();
      await pause(1_000);
      expect(consumed).toEqual([]);

      await own.restart!();
      await until(() => bus.healthy(), 15_000, "the first connection");
      await until(() => consumed.includes(waiting.id), 20_000, "the outbox's event through the consumer made on connection");
      const later = keyEvent();
      await bus.publish(later);
      await until(() => consumed.includes(later.id) && heard.includes(later.id), 10_000, "a later event to the consumer and the listener");
      // Warnings at the 1st, 2nd, 4th… failure only: a few lines, not one per attempt.
      const warnings = lines.filter((l) => l.msg === "NATS unreachable; serving without it and retrying in the background");
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      expect(warnings.every((l) => Number.isInteger(Math.log2(Number(l.failures))))).toBe(true);
      await relay.stop();
    } finally {
      await own.stop();
    }
  }, 60_000);

  it("closes at once when NATS never answered, and a consumer stopped before then is never made", async () => {
    const own = await startTestNats({ private: true });
    await own.kill!();
    const retry = { initialDelayMs: 50, maxDelayMs: 200 };
    try {
      const bus = await connectNatsBus({ url: own.url, namespace: namespace(), logger: silentLogger(), name: "bus-test", retry });
      buses.push(bus);
      const subscription = await bus.consume("test_never", ["identity.api_key.>"], async () => undefined);
      await subscription.stop();

      const closing = await connectNatsBus({ url: own.url, namespace: namespace(), logger: silentLogger(), name: "bus-test", retry });
      const started = Date.now();
      await closing.close();
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(closing.healthy()).toBe(false);

      await own.restart!();
      await until(() => bus.healthy(), 15_000, "the first connection");
      await pause(1_000);
      // The stopped consumer made no stream and no consumer on the server.
      const monitor = await connect({ servers: own.url });
      try {
        expect(await (await jetstreamManager(monitor)).streams.names().next()).toEqual([]);
      } finally {
        await monitor.close();
      }
    } finally {
      await own.stop();
    }
  }, 60_000);
});
