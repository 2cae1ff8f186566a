import type { HoldRequest } from "@switchyard/contracts";
import { silentLogger } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { defaultReplicaId, leasedHolds } from "./hold-leases.js";
import type { IdentityHolds } from "./holds.js";

/** Identity's side, recording what it is asked; `failReleases` releases fail before one succeeds. */
function identityStub(failReleases = 0) {
  const calls: string[] = [];
  const held: HoldRequest[] = [];
  let failures = failReleases;
  const identity: IdentityHolds = {
    hold: async (request) => (held.push(request), { granted: true }),
    release: async (id) => {
      calls.push(`release ${id}`);
      if (failures-- > 0) throw new Error("identity timed out");
      return true;
    },
    renew: async (owner, leaseMs) => (calls.push(`renew ${owner} ${leaseMs}`), 1),
    releaseOwner: async (owner) => (calls.push(`releaseOwner ${owner}`), 2),
    detach: async (owner) => (calls.push(`detach ${owner}`), 0),
  };
  return { identity, calls, held };
}

const request: HoldRequest = { generation_id: "gen-1", key_hash: "a".repeat(64), amount_usd: "0.01", is_byok: false, ttl_ms: 60_000 };
const waitFor = async (probe: () => boolean, withinMs = 5000) => {
  const start = Date.now();
  while (!probe()) {
    if (Date.now() - start > withinMs) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe("leasedHolds", () => {
  it("frees the previous run's holds first, owns every hold it takes, renews them, and detaches them when stopped", async () => {
    const { identity, calls, held } = identityStub();
    const leased = await leasedHolds(identity, { owner: "inference@host:1", leaseMs: 1200, logger: silentLogger() });
    expect(calls).toEqual(["releaseOwner inference@host:1"]);
    await leased.holds.hold(request);
    expect(held[0]).toMatchObject({ generation_id: "gen-1", owner: "inference@host:1", lease_ms: 1200 });
    await waitFor(() => calls.includes("renew inference@host:1 1200"));
    await leased.stop();
    expect(calls.at(-1)).toBe("detach inference@host:1");
  });

  it("tries a failed release again with backoff until it succeeds", async () => {
    const { identity, calls } = identityStub(2);
    const leased = await leasedHolds(identity, { owner: "r", leaseMs: 60_000, logger: silentLogger(), retryBaseMs: 20 });
    expect(await leased.holds.release("gen-1")).toBe(false); // failed now; tried again in the background
    await waitFor(() => calls.filter((c) => c === "release gen-1").length === 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(calls.filter((c) => c === "release gen-1")).toHaveLength(3); // succeeded on the third: no more tries
    await leased.stop();
  });

  it("gives up after its retries, and tries pending releases once more when stopped", async () => {
    const { identity, calls } = identityStub(100);
    const leased = await leasedHolds(identity, { owner: "r", leaseMs: 60_000, logger: silentLogger(), releaseRetries: 2, retryBaseMs: 10 });
    await leased.holds.release("gen-1");
    await waitFor(() => calls.filter((c) => c === "release gen-1").length === 3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(calls.filter((c) => c === "release gen-1")).toHaveLength(3);

    const slow = await leasedHolds(identity, { owner: "s", leaseMs: 60_000, logger: silentLogger(), retryBaseMs: 60_000 });
    await slow.holds.release("gen-2");
    await slow.stop();
    expect(calls.filter((c) => c === "release gen-2")).toHaveLength(2);
    await leased.stop();
  });

  it("names a replica by service, host and port, and by pid on an ephemeral port", () => {
    expect(defaultReplicaId("inference", 8082)).toMatch(/^inference@.+:8082$/);
    expect(defaultReplicaId("standalone", 0)).toBe(defaultReplicaId("standalone", 0));
    expect(defaultReplicaId("standalone", 0)).toMatch(new RegExp(`:0-pid${process.pid}$`));
  });

  it("stops within its wait when identity does not answer", async () => {
    const { identity } = identityStub();
    const leased = await leasedHolds({ ...identity, detach: () => new Promise(() => {}) }, { owner: "r", leaseMs: 60_000, logger: silentLogger(), stopWaitMs: 50 });
    const started = Date.now();
    await leased.stop();
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
