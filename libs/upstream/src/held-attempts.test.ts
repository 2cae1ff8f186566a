import type { ResolvedEndpoint } from "@switchyard/contracts";
import { silentLogger } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import type { Candidate } from "./candidates.js";
import { createEndpointHealth } from "./endpoint-health.js";
import { UpstreamError } from "./errors.js";
import { firstAcceptingHeld } from "./held-attempts.js";

const endpoint = (provider: string) =>
  ({ provider, adapter: "fake", base_url: "http://127.0.0.1:9", upstream_model: "m", pricing: {}, service_tiers: {}, context_length: 100, max_completion_tokens: null, api_key_env: [], byok: null }) as unknown as ResolvedEndpoint;
const candidates: Candidate[] = [{ model: "v/m", endpoint: endpoint("first") }, { model: "v/m", endpoint: endpoint("second") }];

/** Two attempts whose calls do what `calls` say; what the hold and the abandonment saw. */
async function run(calls: Array<(client: AbortController) => Promise<string>>, hold: () => Promise<{ granted: true }> = async () => ({ granted: true })) {
  const client = new AbortController();
  const seen = { released: 0, abandoned: [] as string[] };
  const holds = { hold, release: async () => ((seen.released += 1), true) };
  const context = { env: {}, cooldowns: createEndpointHealth({ cooldownMs: 1000, probeWindowMs: 1000 }), logger: silentLogger(), signal: client.signal, timeouts: { firstByteMs: 5000, idleMs: 5000, failureCooldownMs: 1000 } };
  const options = { hold: { holds, generationId: "gen-1", keyHash: "k", ttlMs: 1000 }, timedOut: () => false, abandoned: (c: Candidate) => void seen.abandoned.push(c.endpoint.provider) };
  let next = 0;
  const outcome = await firstAcceptingHeld({ fake: {} }, candidates, context, [], options, () => 100n, () => calls[next++]!(client)).then(
    (r) => r.candidate.endpoint.provider,
    (error: unknown) => error,
  );
  return { outcome, ...seen };
}

describe("an attempt the client leaves", () => {
  it("is charged when the client leaves while its provider works on the request", async () => {
    const { outcome, released, abandoned } = await run([
      (client) => {
        client.abort();
        return Promise.reject(new DOMException("aborted", "AbortError"));
      },
    ]);
    expect(outcome).toBeInstanceOf(Error);
    expect({ released, abandoned }).toEqual({ released: 0, abandoned: ["first"] });
  });

  it("is not charged when its provider had already answered with an error as the client left", async () => {
    const { released, abandoned } = await run([
      (client) => {
        client.abort();
        return Promise.reject(new UpstreamError("upstream broke", 500, true));
      },
    ]);
    expect({ released, abandoned }).toEqual({ released: 1, abandoned: [] });
  });

  it("charges nothing for an endpoint that failed before the client left between attempts", async () => {
    const { released, abandoned } = await run([() => Promise.reject(new UpstreamError("unreachable", null, true)), async (client) => (client.abort(), Promise.reject(new UpstreamError("late", 503, true)))]);
    expect({ released, abandoned }).toEqual({ released: 1, abandoned: [] });
  });
});

describe("an attempt whose hold call got no answer", () => {
  it("calls no provider, answers 503 and releases the hold it may have written", async () => {
    let called = 0;
    const { outcome, released } = await run([async () => (called++, "served")], () => Promise.reject(new Error("/internal/holds timed out after 5000 ms")));
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toMatchObject({ status: 503 });
    expect({ called, released }).toEqual({ called: 0, released: 1 });
  });
});
