import type { ResolvedEndpoint } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { createEndpointHealth, type EndpointChange } from "./endpoint-health.js";

const endpoint = (provider: string) => ({ provider, upstream_model: "m" }) as ResolvedEndpoint;

function clocked() {
  let t = 1_000_000;
  const shared: EndpointChange[] = [];
  const health = createEndpointHealth({ cooldownMs: 30_000, probeWindowMs: 5_000, now: () => t, share: (c) => void shared.push(c) });
  return { health, shared, advance: (ms: number) => void (t += ms) };
}

describe("endpoint health", () => {
  it("rests a failed endpoint for the cool-down, or its Retry-After up to five minutes", () => {
    const { health, advance } = clocked();
    const a = endpoint("a");
    expect(health.coolingDown(a)).toBe(false);
    health.failed(a);
    expect(health.coolingDown(a)).toBe(true);
    advance(29_999);
    expect(health.coolingDown(a)).toBe(true);
    advance(1);
    expect(health.coolingDown(a)).toBe(false);
    health.failed(a, 3_600_000);
    advance(300_000);
    expect(health.coolingDown(a)).toBe(false);
  });

  it("lets one probe through after the rest; its success lets the endpoint back, its failure rests it again", () => {
    const { health, advance } = clocked();
    const a = endpoint("a");
    health.failed(a);
    advance(30_000);
    // The first request that tries it is the probe; meanwhile the others keep it behind.
    health.attempting(a);
    expect(health.coolingDown(a)).toBe(true);
    health.failed(a);
    advance(29_000);
    expect(health.coolingDown(a)).toBe(true);
    advance(1_000);
    health.attempting(a);
    health.succeeded(a);
    expect(health.coolingDown(a)).toBe(false);
  });

  it("lets another probe through when one never reports within its window", () => {
    const { health, advance } = clocked();
    const a = endpoint("a");
    health.failed(a);
    advance(30_000);
    health.attempting(a);
    advance(4_999);
    expect(health.coolingDown(a)).toBe(true);
    advance(1);
    expect(health.coolingDown(a)).toBe(false);
  });

  it("shares only changes: the first failure and the recovery, and applies what others share", () => {
    const { health, shared } = clocked();
    const a = endpoint("a");
    health.failed(a);
    health.failed(a);
    health.succeeded(a);
    health.succeeded(a);
    expect(shared).toEqual([
      { provider: "a", upstream_model: "m", rest_ms: 30_000 },
      { provider: "a", upstream_model: "m", rest_ms: null },
    ]);
    health.apply({ provider: "b", upstream_model: "m", rest_ms: 10_000 });
    expect(health.coolingDown(endpoint("b"))).toBe(true);
    health.apply({ provider: "b", upstream_model: "m", rest_ms: null });
    expect(health.coolingDown(endpoint("b"))).toBe(false);
    // Applying is not sharing again.
    expect(shared).toHaveLength(2);
  });
});
