import type { ChatCompletionRequest } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { requestedParameters, routedPreferences, upstreamBody } from "./request-body.js";

const request = (extra: Record<string, unknown>) => ({ messages: [{ role: "user", content: "Hi" }], stream: false, ...extra }) as ChatCompletionRequest;
const two = { model: "a/one", models: ["a/two"] };

describe("route", () => {
  it("sorts the endpoints of every model as one list for sort, as provider.sort's partition none", () => {
    expect(routedPreferences(request({ ...two, provider: { sort: "price" }, route: "sort" }))).toEqual({ sort: { by: "price", partition: "none" } });
    expect(routedPreferences(request({ ...two, provider: { sort: { by: "latency" } }, route: "sort" }))).toEqual({ sort: { by: "latency", partition: "none" } });
  });

  it("leaves the preferences as they are where it changes nothing, and is never sent upstream", () => {
    const unchanged = [
      { ...two, provider: { sort: "price" }, route: "fallback" },
      { ...two, route: "sort" },
      { ...two, provider: { sort: "exacto" }, route: "sort" },
      { ...two, provider: { sort: { by: "price", partition: "none" } }, route: "sort" },
      { ...two, provider: { sort: { by: "price", partition: "model" } }, route: "fallback" },
      { ...two, provider: { sort: "price" }, route: null },
    ];
    for (const extra of unchanged) {
      expect(routedPreferences(request(extra))).toEqual((extra as { provider?: unknown }).provider);
      expect(upstreamBody(request(extra), "ws")).not.toHaveProperty("route");
    }
  });

  it("must agree with a partition given beside it", () => {
    expect(() => routedPreferences(request({ ...two, provider: { sort: { by: "price", partition: "model" } }, route: "sort" }))).toThrow(
      "route: sort (partition none) conflicts with provider.sort.partition model",
    );
  });
});

describe("requested parameters", () => {
  it("are the caller's own parameters that are set, null ones asking for the default", () => {
    expect(requestedParameters(request({ model: "a/one", temperature: null, seed: 3, provider: { require_parameters: true }, route: "fallback" }))).toEqual(["seed"]);
  });
});
