import type { ResolvedModel } from "@switchyard/contracts";
import type { Caller } from "@switchyard/runtime";
import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { refuseUnknown, withPreset } from "./body.js";
import type { MediaDeps } from "./deps.js";
import { modelList } from "./resolution.js";

describe("refuseUnknown", () => {
  it("names the fields a route does not take, the first five of them", () => {
    expect(() => refuseUnknown({ model: "a/b", prompt: "x" }, ["model", "prompt"])).not.toThrow();
    expect(() => refuseUnknown({ model: "a/b", style: "vivid" }, ["model"])).toThrow("Invalid body: unknown field style");
    const seven = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`f${i}`, i]));
    expect(() => refuseUnknown(seven, [])).toThrow("Invalid body: unknown fields f0, f1, f2, f3, f4 (and 2 more)");
  });

  it("leaves a body that is not an object to the schema", () => {
    expect(() => refuseUnknown(["x"], [])).not.toThrow();
    expect(() => refuseUnknown(null, [])).not.toThrow();
  });
});

describe("modelList", () => {
  it("puts the model first and each fallback once, or asks for the default when none is named", () => {
    expect(modelList("a/b", ["c/d", "a/b", "e/f"])).toEqual([
      { id: "a/b", field: "model" },
      { id: "c/d", field: "models[0]" },
      { id: "e/f", field: "models[2]" },
    ]);
    expect(modelList(undefined, ["c/d"])).toEqual([{ id: "c/d", field: "models[0]" }]);
    expect(modelList(undefined, undefined)).toEqual([{ id: "", field: "model" }]);
  });
});

describe("withPreset", () => {
  const preset = { id: "p-1", slug: "warm", version: 1, system_prompt: "", config: { model: "a/b", temperature: 0.3, provider: { only: ["x"] }, models: ["c/d"] } };
  const deps = { resolve: async () => ({ model: "a/b", preset }) as unknown as ResolvedModel } as unknown as MediaDeps;
  const req = { headers: {} } as Request;
  const caller = { keyHash: "k", workspaceId: "w", organizationId: "o" } as Caller;
  const takes = ["model", "temperature", "provider", "models"];

  it("adds the preset's fields the body leaves out, the body's own winning", async () => {
    const { body, preset: found } = await withPreset(deps, req, caller, { model: "@preset/warm", temperature: 0.1 }, { takes, route: "/audio/transcriptions" });
    expect(body).toEqual({ model: "@preset/warm", temperature: 0.1, provider: { only: ["x"] }, models: ["c/d"] });
    expect(found?.preset.id).toBe("p-1");
  });

  it("gives a form the preset's values as form fields: text, JSON text, repeated fields", async () => {
    const { body } = await withPreset(deps, req, caller, { model: "@preset/warm" }, { takes, route: "/audio/transcriptions", form: true });
    expect(body).toEqual({ model: "@preset/warm", temperature: "0.3", provider: '{"only":["x"]}', models: ["c/d"] });
  });

  it("refuses a preset field the route does not take, and leaves a body without a preset alone", async () => {
    await expect(withPreset(deps, req, caller, { model: "@preset/warm" }, { takes: ["model"], route: "/images" })).rejects.toThrow(/sets temperature, provider, models, which \/images does not take/);
    const plain = { model: "a/b" };
    expect((await withPreset(deps, req, caller, plain, { takes, route: "/images" })).body).toBe(plain);
  });
});
