import type { EventEnvelope } from "@switchyard/contracts";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { keyEvent } from "../../../../tests/support/events.js";
import { silentLogger } from "../log.js";
import { createMemoryBus } from "./memory.js";

const captureLogs = () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
};

describe("memory bus", () => {
  it("delivers to every consumer group once, sharing within a group, and to every listener", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const seen: string[] = [];
    await bus.consume("a_one", ["identity.api_key.>"], async () => void seen.push("a1"));
    await bus.consume("a_one", ["identity.api_key.>"], async () => void seen.push("a2"));
    await bus.consume("b_one", ["identity.>"], async () => void seen.push("b"));
    await bus.consume("c_one", ["identity.workspace.>"], async () => void seen.push("c"));
    await bus.listen(["identity.api_key.>"], async () => void seen.push("l1"));
    await bus.listen(["*.api_key.*.v1"], async () => void seen.push("l2"));
    await bus.publish(keyEvent());
    await bus.publish(keyEvent());
    expect(seen.filter((s) => s === "b")).toHaveLength(2);
    expect(seen.filter((s) => s === "l1")).toHaveLength(2);
    expect(seen.filter((s) => s === "l2")).toHaveLength(2);
    expect(seen.filter((s) => s === "a1")).toHaveLength(1);
    expect(seen.filter((s) => s === "a2")).toHaveLength(1);
    expect(seen).not.toContain("c");
  });

  it("resolves publish only after every consumer group has handled the event", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const done: string[] = [];
    await bus.consume("slow_one", ["identity.>"], async (e) => {
      await new Promise((r) => setTimeout(r, 50));
      done.push(`slow:${e.id}`);
    });
    await bus.consume("fast_one", ["identity.api_key.updated.v1"], async (e) => void done.push(`fast:${e.id}`));
    const event = keyEvent();
    await bus.publish(event);
    expect(done.sort()).toEqual([`fast:${event.id}`, `slow:${event.id}`]);
  });

  it("retries a failing handler, then parks the event after maxDeliveries with a log line", async () => {
    const { logger, lines } = captureLogs();
    const bus = createMemoryBus({ logger });
    let attempts = 0;
    await bus.consume("flaky_one", ["identity.>"], async () => {
      if (++attempts < 3) throw new Error("not yet");
    });
    await bus.publish(keyEvent());
    expect(attempts).toBe(3);
    expect(bus.parkedCount()).toBe(0);

    let poisoned = 0;
    await bus.consume("poison_one", ["identity.>"], async () => {
      poisoned++;
      throw new Error("always");
    }, { maxDeliveries: 2 });
    const event = keyEvent();
    await bus.publish(event);
    expect(poisoned).toBe(2);
    expect(bus.parkedCount()).toBe(1);
    const parkedLine = lines.find((l) => String(l.msg).includes("parked"));
    expect(parkedLine).toMatchObject({ subject: event.subject, eventId: event.id, consumer: "poison_one", level: 50 });
  });

  it("hands events published together to a batch consumer in one call, in order, and to others one by one", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const batches: string[][] = [];
    const single: string[] = [];
    await bus.consumeBatches("batch_one", ["identity.>"], async (events) => void batches.push(events.map((e) => e.id)));
    await bus.consume("single_one", ["identity.>"], async (event) => void single.push(event.id));
    const events = [keyEvent("a"), keyEvent("b"), keyEvent("c")];
    await bus.publishAll!(events);
    await bus.publish(keyEvent("d"));
    expect(batches).toHaveLength(2);
    expect(batches[0]).toEqual(events.map((e) => e.id));
    expect(single.slice(0, 3)).toEqual(events.map((e) => e.id));
  });

  it("redelivers a failed batch event by event, so only the poison event is parked", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const applied: string[] = [];
    await bus.consumeBatches("ledger_one", ["identity.>"], async (events) => {
      if (events.some((e) => (e.data as { hash: string }).hash === "poison")) throw new Error("cannot apply");
      applied.push(...events.map((e) => (e.data as { hash: string }).hash));
    }, { maxDeliveries: 2 });
    await bus.publishAll!([keyEvent("a"), keyEvent("poison"), keyEvent("b")]);
    expect(applied).toEqual(["a", "b"]);
    expect(bus.parkedCount()).toBe(1);
  });

  it("keeps publishing when a listener throws, and logs the failure", async () => {
    const { logger, lines } = captureLogs();
    const bus = createMemoryBus({ logger });
    let healthyListener = 0;
    await bus.listen(["identity.>"], async () => {
      throw new Error("listener bug");
    });
    await bus.listen(["identity.>"], async () => void healthyListener++);
    await expect(bus.publish(keyEvent())).resolves.toBeUndefined();
    await new Promise((r) => setTimeout(r, 10));
    expect(healthyListener).toBe(1);
    expect(lines.some((l) => l.msg === "event listener failed")).toBe(true);
  });

  it("validates events at publish and gives each handler its own copy", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const got: EventEnvelope[] = [];
    await bus.consume("one_copy", ["identity.>"], async (e) => {
      (e.data as { hash: string }).hash = "mutated";
      got.push(e);
    });
    await bus.consume("two_copy", ["identity.>"], async (e) => void got.push(e));
    const event = keyEvent("original");
    await bus.publish(event);
    expect(event.data).toMatchObject({ hash: "original" });
    expect(got.map((e) => (e.data as { hash: string }).hash).sort()).toEqual(["mutated", "original"]);
    const bogus = { ...keyEvent(), subject: "identity.nothing.v1" } as unknown as EventEnvelope;
    await expect(bus.publish(bogus)).rejects.toThrow(/unknown event subject/);
  });

  it("stops members, rejects conflicting registrations, and refuses to publish after close", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const seen: string[] = [];
    const first = await bus.consume("pair_one", ["identity.>"], async () => void seen.push("first"));
    await bus.consume("pair_one", ["identity.>"], async () => void seen.push("second"));
    await first.stop();
    await bus.publish(keyEvent());
    await bus.publish(keyEvent());
    expect(seen).toEqual(["second", "second"]);
    await expect(bus.consume("pair_one", ["identity.workspace.>"], async () => {})).rejects.toThrow(/other subjects/);
    await expect(bus.consume("wild_one", [">"], async () => {})).rejects.toThrow(/domain/);
    await expect(bus.consume("zero_one", ["identity.>"], async () => {}, { maxDeliveries: 0 })).rejects.toThrow(/maxDeliveries/);
    expect(bus.healthy()).toBe(true);
    await bus.close();
    expect(bus.healthy()).toBe(false);
    await expect(bus.publish(keyEvent())).rejects.toThrow(/closed/);
  });

  it("held, keeps what is published for consumers that subscribe before its release", async () => {
    const bus = createMemoryBus({ logger: silentLogger(), held: true });
    const seen: string[] = [];
    const event = keyEvent();
    let delivered = false;
    const publishing = bus.publish(event).then(() => void (delivered = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(delivered).toBe(false);
    await bus.consume("late_one", ["identity.>"], async (e) => void seen.push(e.id));
    bus.release!();
    await publishing;
    expect(seen).toEqual([event.id]);
    // Released once, it delivers at once.
    await bus.publish(keyEvent());
    expect(seen).toHaveLength(2);
  });

  it("held and closed before its release, fails what waits, so the outbox keeps it", async () => {
    const bus = createMemoryBus({ logger: silentLogger(), held: true });
    const publishing = bus.publish(keyEvent());
    await bus.close();
    await expect(publishing).rejects.toThrow(/closed/);
  });
});
