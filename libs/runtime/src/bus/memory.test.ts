import { describe, expect, it } from "vitest";
import { keyEvent } from "../../../../tests/support/events.js";
import { silentLogger } from "../log.js";
import { createMemoryBus } from "./memory.js";
import { subjectMatches } from "./subject-match.js";

describe("subject matching", () => {
  it("follows NATS wildcards", () => {
    expect(subjectMatches("identity.api_key.>", "identity.api_key.updated.v1")).toBe(true);
    expect(subjectMatches("identity.*.updated.v1", "identity.api_key.updated.v1")).toBe(true);
    expect(subjectMatches("identity.api_key.>", "identity.api_key")).toBe(false);
    expect(subjectMatches("identity.workspace.>", "identity.api_key.updated.v1")).toBe(false);
    expect(subjectMatches("a.b", "a.b.c")).toBe(false);
  });
});

describe("memory bus", () => {
  it("delivers to every consumer group once, sharing within a group, and to every listener", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    const seen: string[] = [];
    await bus.consume("a_one", ["identity.api_key.>"], async () => void seen.push("a1"));
    await bus.consume("a_one", ["identity.api_key.>"], async () => void seen.push("a2"));
    await bus.consume("b_one", ["identity.>"], async () => void seen.push("b"));
    await bus.consume("c_one", ["identity.workspace.>"], async () => void seen.push("c"));
    await bus.listen(["identity.api_key.>"], async () => void seen.push("listener"));
    await bus.publish(keyEvent());
    await bus.publish(keyEvent());
    expect(seen.filter((s) => s === "b")).toHaveLength(2);
    expect(seen.filter((s) => s === "listener")).toHaveLength(2);
    expect(seen.filter((s) => s === "a1")).toHaveLength(1);
    expect(seen.filter((s) => s === "a2")).toHaveLength(1);
    expect(seen).not.toContain("c");
  });

  it("retries a failing handler, then parks the event after maxDeliveries", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
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
    await bus.publish(keyEvent());
    expect(poisoned).toBe(2);
    expect(bus.parkedCount()).toBe(1);
  });

  it("keeps publishing when a listener throws", async () => {
    const bus = createMemoryBus({ logger: silentLogger() });
    await bus.listen(["identity.>"], async () => {
      throw new Error("listener bug");
    });
    await expect(bus.publish(keyEvent())).resolves.toBeUndefined();
  });
});
