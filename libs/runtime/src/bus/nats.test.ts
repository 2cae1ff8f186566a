import { randomBytes } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyEvent } from "../../../../tests/support/events.js";
import { startTestNats, type TestNats } from "../../../../tests/support/nats.js";
import { openPglite } from "../db/pglite.js";
import { migrate } from "../db/migrate.js";
import { silentLogger } from "../log.js";
import { connectNatsBus } from "./nats.js";
import { enqueueEvent, outboxMigration, startOutboxRelay } from "./outbox.js";
import type { Bus } from "./types.js";

let nats: TestNats;
const buses: Bus[] = [];
const namespace = () => `t${randomBytes(5).toString("hex")}`;
const open = async (ns: string, url = nats.url) => {
  const bus = await connectNatsBus({ url, namespace: ns, logger: silentLogger(), name: "test" });
  buses.push(bus);
  return bus;
};
const until = async (check: () => boolean, ms = 10_000) => {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

beforeAll(async () => {
  nats = await startTestNats();
});
afterAll(async () => {
  await Promise.all(buses.map((b) => b.close().catch(() => undefined)));
  await nats?.stop();
});

describe("NATS JetStream bus", () => {
  it("delivers published events to a durable consumer, once per event id", async () => {
    const bus = await open(namespace());
    const got: EventEnvelope[] = [];
    await bus.consume("test_basic", ["identity.api_key.>"], async (e) => void got.push(e));
    const event = keyEvent("one");
    await bus.publish(event);
    await bus.publish(event); // the same id again: JetStream drops the duplicate
    await bus.publish(keyEvent("two"));
    await until(() => got.length >= 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(got.map((e) => (e.data as { hash: string }).hash)).toEqual(["one", "two"]);
    expect(got[0]).toEqual(event);
  });

  it("redelivers after a failure and parks after maxDeliveries", async () => {
    const bus = await open(namespace());
    let flaky = 0;
    await bus.consume("test_flaky", ["identity.api_key.>"], async () => {
      if (++flaky < 2) throw new Error("transient");
    });
    let poison = 0;
    await bus.consume("test_poison", ["identity.api_key.>"], async () => {
      poison++;
      throw new Error("always");
    }, { maxDeliveries: 2 });
    await bus.publish(keyEvent());
    await until(() => flaky >= 2 && bus.parkedCount() === 1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(flaky).toBe(2);
    expect(poison).toBe(2);
  });

  it("shares one durable consumer between processes and fans listeners out to all", async () => {
    const ns = namespace();
    const [a, b] = [await open(ns), await open(ns)];
    const handled: string[] = [];
    const heard = { a: 0, b: 0 };
    await a.consume("test_shared", ["identity.api_key.>"], async (e) => void handled.push(`a:${e.id}`));
    await b.consume("test_shared", ["identity.api_key.>"], async (e) => void handled.push(`b:${e.id}`));
    await a.listen(["identity.api_key.>"], async () => void heard.a++);
    await b.listen(["identity.api_key.>"], async () => void heard.b++);
    const events = Array.from({ length: 20 }, () => keyEvent());
    for (const e of events) await a.publish(e);
    await until(() => handled.length >= 20 && heard.a >= 20 && heard.b >= 20).catch((e) => {
      throw new Error(`${e} handled=${handled.length} heard=${JSON.stringify(heard)}`);
    });
    await new Promise((r) => setTimeout(r, 300));
    const ids = handled.map((h) => h.slice(2));
    expect(new Set(ids).size).toBe(20); // every event handled exactly once across the two
    expect(ids.length).toBe(20);
    expect(heard).toEqual({ a: 20, b: 20 });
  });

  it("keeps events in the outbox through a NATS outage and delivers them after it", async () => {
    const own = await startTestNats({ private: true });
    try {
      const ns = namespace();
      const bus = await open(ns, own.url);
      const got: string[] = [];
      await bus.consume("test_outage", ["identity.api_key.>"], async (e) => void got.push(e.id));
      const db = await openPglite();
      await migrate(db, "outage", [outboxMigration("outage")]);
      const relay = startOutboxRelay({ db, schema: "outage", bus, logger: silentLogger(), pollMs: 50 });
      const data = { hash: "h", organization_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b01", workspace_id: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b02" };
      const first = await db.transaction((tx) => enqueueEvent(tx, "outage", "identity.api_key.updated.v1", data));
      relay.wake();
      await until(() => got.includes(first.id));

      await own.kill!();
      await until(() => !bus.healthy());
      const during = await db.transaction((tx) => enqueueEvent(tx, "outage", "identity.api_key.updated.v1", data));
      relay.wake();
      await new Promise((r) => setTimeout(r, 500));
      const [row] = await db.query<{ published_at: Date | null }>(`SELECT published_at FROM outage.outbox WHERE id = $1`, [during.id]);
      expect(row?.published_at).toBeNull();

      await own.restart!();
      await until(() => bus.healthy(), 15_000);
      relay.wake();
      await until(() => got.includes(during.id), 30_000);
      await relay.stop();
      await db.close();
    } finally {
      await own.stop();
    }
  }, 60_000);
});
