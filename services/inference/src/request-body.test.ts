import type { ChatCompletionRequest } from "@switchyard/contracts";
import { describe, expect, it } from "vitest";
import { requestedParameters, upstreamBody } from "./request-body.js";

const request = (extra: Record<string, unknown>) => ({ messages: [{ role: "user", content: "Hi" }], stream: false, ...extra }) as ChatCompletionRequest;
const two = { model: "a/one", models: ["a/two"] };

describe("route", () => {
  it("is refused where sorting every model as one list would change the order", () => {
    for (const sort of ["price", { by: "latency" }]) {
      expect(() => upstreamBody(request({ ...two, provider: { sort }, route: "sort" }), "ws")).toThrow(/route: sort is not applied; send provider.sort as \{"by": "(price|latency)", "partition": "none"\}/);
    }
  });

  it("is accepted where it changes nothing, and never sent upstream", () => {
    const accepted = [
      { ...two, provider: { sort: "price" }, route: "fallback" },
      { ...two, route: "sort" },
      { model: "a/one", provider: { sort: "price" }, route: "sort" },
      { ...two, provider: { sort: "exacto" }, route: "sort" },
      { ...two, provider: { sort: { by: "price", partition: "none" } }, route: "sort" },
      { ...two, provider: { sort: { by: "price", partition: "model" } }, route: "fallback" },
      { ...two, provider: { sort: "price" }, route: null },
    ];
    for (const extra of accepted) expect(upstreamBody(request(extra), "ws")).not.toHaveProperty("route");
  });

  it("must agree with a partition given beside it", () => {
    expect(() => upstreamBody(request({ ...two, provider: { sort: { by: "price", partition: "model" } }, route: "sort" }), "ws")).toThrow(
      "route: sort (partition none) conflicts with provider.sort.partition model",
    );
  });
});

describe("requested parameters", () => {
  it("are the caller's own parameters that are set, null ones asking for the default", () => {
    expect(requestedParameters(request({ model: "a/one", temperature: null, seed: 3, provider: { require_parameters: true }, route: "fallback" }))).toEqual(["seed"]);
  });
});
