import type { ResolvedEndpoint } from "@switchyard/contracts";
import { silentLogger } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import { describe, expect, it } from "vitest";
import type { InferenceDeps } from "../deps.js";
import { SpendHold } from "./hold.js";

const endpoint = { provider: "p", pricing: { prompt: "0.000001", completion: "0.000001" }, service_tiers: {}, context_length: 1000, max_completion_tokens: 100 } as unknown as ResolvedEndpoint;
const first: Candidate = { model: "v/m", endpoint };
const second: Candidate = { model: "v/m", endpoint: { ...endpoint, provider: "q" } };
const body = { messages: [{ role: "user", content: "hi" }] };

function spendHold(hold: () => Promise<{ granted: true }> = async () => ({ granted: true })) {
  const released: string[] = [];
  const holds = { hold, release: async (id: string) => (released.push(id), true) };
  const deps = { holds, holdTtlMs: 1000, logger: silentLogger() } as unknown as InferenceDeps;
  return { hold: new SpendHold(deps, "gen-1", "k"), released };
}

describe("a generation's spend hold when its client leaves", () => {
  const left = AbortSignal.abort();

  it("charges the endpoint whose provider has the request", async () => {
    const { hold } = spendHold();
    await hold.reserve(first, body);
    expect(hold.abandonedBy(left, false)).toBe(first);
  });

  it("charges no endpoint between attempts: the one that failed did no work", async () => {
    const { hold, released } = spendHold();
    await hold.reserve(first, body);
    hold.attemptFailed(first);
    expect(hold.abandonedBy(left, false)).toBeUndefined();
    await hold.release();
    expect(released).toEqual(["gen-1"]);
  });

  it("charges the next endpoint once its attempt has the request", async () => {
    const { hold } = spendHold();
    await hold.reserve(first, body);
    hold.attemptFailed(first);
    await hold.reserve(second, body);
    expect(hold.abandonedBy(left, false)).toBe(second);
  });
});

describe("a generation's spend hold whose hold call got no answer", () => {
  it("is a 503, and the hold identity may have written is released", async () => {
    const { hold, released } = spendHold(() => Promise.reject(new Error("/internal/holds timed out after 5000 ms")));
    await expect(hold.reserve(first, body)).rejects.toMatchObject({ status: 503 });
    await hold.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(released).toEqual(["gen-1"]);
  });
});
