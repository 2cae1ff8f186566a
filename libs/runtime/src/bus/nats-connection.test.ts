import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { connectInBackground } from "./nats-connection.js";

const captureLogs = () => {
  const lines: Array<{ msg: string; failures?: number; retryInMs?: number; attempts?: number }> = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
  return { logger, lines };
};

/** A connect function that fails `failures` times, then answers with `value`. */
const flaky = (failures: number, value = "connection") => {
  let calls = 0;
  const connect = vi.fn(async () => {
    calls++;
    if (calls <= failures) throw new Error("connect ECONNREFUSED 127.0.0.1:4222");
    return value;
  });
  return connect;
};

afterEach(() => {
  vi.useRealTimers();
});

describe("connectInBackground", () => {
  it("connects at the first attempt without waiting or logging a failure", async () => {
    const { logger, lines } = captureLogs();
    const link = connectInBackground({ connect: flaky(0), logger, server: "nats://x" });
    await link.firstAttempt;
    expect(link.current()).toBe("connection");
    await expect(link.ready).resolves.toBe("connection");
    expect(link.failures()).toBe(0);
    expect(lines).toEqual([]);
  });

  it("retries with doubling backoff up to the cap, warning at the 1st, 2nd, 4th, 8th… failure only", async () => {
    vi.useFakeTimers();
    const { logger, lines } = captureLogs();
    const connect = flaky(20);
    const link = connectInBackground({ connect, logger, server: "nats://x", initialDelayMs: 250, maxDelayMs: 15_000, random: () => 0.5 });
    await link.firstAttempt;
    expect(link.current()).toBeUndefined();
    expect(link.failures()).toBe(1);
    let connected = false;
    void link.ready.then(() => (connected = true));
    // 250 + 500 + … doubling, capped at 15 s: well under 5 minutes for 20 failures.
    await vi.advanceTimersByTimeAsync(300_000);
    expect(connected).toBe(true);
    expect(connect).toHaveBeenCalledTimes(21);
    const warnings = lines.filter((l) => l.msg.startsWith("NATS unreachable"));
    expect(warnings.map((l) => l.failures)).toEqual([1, 2, 4, 8, 16]);
    expect(warnings.map((l) => l.retryInMs)).toEqual([250, 500, 2_000, 15_000, 15_000]);
    expect(lines.at(-1)).toMatchObject({ msg: "NATS connected after an outage at startup", attempts: 21 });
  });

  it("jitters each wait within ±20 %", async () => {
    vi.useFakeTimers();
    const { logger, lines } = captureLogs();
    const low = connectInBackground({ connect: flaky(1), logger, server: "nats://x", initialDelayMs: 1_000, random: () => 0 });
    const high = connectInBackground({ connect: flaky(1), logger, server: "nats://x", initialDelayMs: 1_000, random: () => 0.999 });
    await Promise.all([low.firstAttempt, high.firstAttempt]);
    expect(lines.map((l) => l.retryInMs ?? 0).sort((a, b) => a - b)).toEqual([800, 1_200]);
    await vi.advanceTimersByTimeAsync(1_200);
    expect([low.current(), high.current()]).toEqual(["connection", "connection"]);
  });

  it("stops retrying when cancelled, and hands back a connection made as it was cancelled", async () => {
    vi.useFakeTimers();
    const { logger } = captureLogs();
    const connect = flaky(1_000);
    const link = connectInBackground({ connect, logger, server: "nats://x" });
    await vi.advanceTimersByTimeAsync(5_000);
    const calls = connect.mock.calls.length;
    await expect(link.cancel()).resolves.toBeUndefined();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(connect).toHaveBeenCalledTimes(calls);
    expect(link.current()).toBeUndefined();

    let answer: (value: string) => void = () => undefined;
    const slow = connectInBackground({ connect: () => new Promise<string>((resolve) => (answer = resolve)), logger, server: "nats://x" });
    const cancelled = slow.cancel();
    answer("late");
    await expect(cancelled).resolves.toBe("late");
    expect(slow.current()).toBeUndefined();
  });

  it("refuses a backoff that cannot work", () => {
    const { logger } = captureLogs();
    expect(() => connectInBackground({ connect: flaky(0), logger, server: "nats://x", initialDelayMs: 0 })).toThrow(/backoff/);
    expect(() => connectInBackground({ connect: flaky(0), logger, server: "nats://x", initialDelayMs: 500, maxDelayMs: 100 })).toThrow(/backoff/);
  });
});
