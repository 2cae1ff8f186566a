import { describe, expect, it } from "vitest";
import { issuePaths } from "../../../tests/support/schema-checks.js";
import { generationQuery } from "./generation.js";
import { modelEndpointsParams } from "./model-endpoints.js";
import { listModelsQuery, listUserModelsQuery } from "./models.js";
import { createPresetBody, listPresetsQuery, presetSlugParams, presetVersionParams } from "./presets.js";

describe("GET /models/user and /models query", () => {
  it("defaults output_modalities to text and parses lists and all", () => {
    expect(listUserModelsQuery.parse({})).toEqual({ output_modalities: ["text"] });
    expect(listUserModelsQuery.parse({ output_modalities: "text, image,text" }).output_modalities).toEqual(["text", "image"]);
    expect(listUserModelsQuery.parse({ output_modalities: "all" }).output_modalities).toBe("all");
    const every = "text,image,embeddings,audio,video,rerank,speech,transcription";
    expect(listUserModelsQuery.parse({ output_modalities: every }).output_modalities).toHaveLength(8);
  });

  it("accepts what the SDK always sends: offset 0 and limit 500", () => {
    expect(listUserModelsQuery.parse({ offset: "0", limit: "500" })).toMatchObject({ offset: 0, limit: 500 });
    expect(listUserModelsQuery.parse({ limit: "1000" })).toMatchObject({ limit: 1000 });
  });

  it.each([
    ["offset", { offset: "-1" }],
    ["offset", { offset: "1.5" }],
    ["limit", { limit: "0" }],
    ["limit", { limit: "1001" }],
    ["output_modalities", { output_modalities: "text,smell" }],
    ["output_modalities", { output_modalities: "all,text" }],
    ["output_modalities", { output_modalities: "" }],
  ])("rejects a bad %s", (field, query) => {
    expect(issuePaths(listUserModelsQuery, query)).toContain(field);
    expect(issuePaths(listModelsQuery, query)).toContain(field);
  });

  it("splits the /models list filters", () => {
    expect(listModelsQuery.parse({ supported_parameters: "tools,seed" }).supported_parameters).toEqual(["tools", "seed"]);
    expect(listModelsQuery.parse({ input_modalities: "image" }).input_modalities).toEqual(["image"]);
  });
});

describe("path parameters", () => {
  it("model endpoints take the two halves of a model id", () => {
    expect(issuePaths(modelEndpointsParams, { author: "openai", slug: "gpt-4o-mini" })).toEqual([]);
    expect(issuePaths(modelEndpointsParams, { author: "", slug: "x" })).toContain("author");
    expect(issuePaths(modelEndpointsParams, { author: "openai", slug: "a b" })).toContain("slug");
  });

  it("preset slugs are URL-safe with at least 1 character; versions are positive integers", () => {
    expect(issuePaths(presetSlugParams, { slug: "my-preset_v2.1~x" })).toEqual([]);
    expect(issuePaths(presetSlugParams, { slug: "" })).toContain("slug");
    expect(issuePaths(presetSlugParams, { slug: "has space" })).toContain("slug");
    expect(issuePaths(presetSlugParams, { slug: "a/b" })).toContain("slug");
    expect(presetVersionParams.parse({ slug: "p", version: "3" })).toEqual({ slug: "p", version: 3 });
    expect(issuePaths(presetVersionParams, { slug: "p", version: "0" })).toEqual(["version"]);
    expect(issuePaths(presetVersionParams, { slug: "p", version: "latest" })).toEqual(["version"]);
  });

  it("generation lookups need an id", () => {
    expect(issuePaths(generationQuery, { id: "gen-1767225600-abc" })).toEqual([]);
    expect(issuePaths(generationQuery, {})).toEqual(["id"]);
    expect(issuePaths(generationQuery, { id: "" })).toEqual(["id"]);
  });
});

describe("presets", () => {
  it("pages with offset and limit", () => {
    expect(listPresetsQuery.parse({ offset: "0", limit: "50" })).toEqual({ offset: 0, limit: 50 });
    expect(issuePaths(listPresetsQuery, { limit: "0" })).toEqual(["limit"]);
  });

  it("creates from a chat request body, ignoring its messages", () => {
    const body = { model: "openai/gpt-4o", temperature: 0.7, messages: [], stream: false, name: "Helpful" };
    expect(issuePaths(createPresetBody, body)).toEqual([]);
    expect(issuePaths(createPresetBody, { model: "openai/gpt-4o" })).toEqual([]);
  });

  it.each([
    ["temperature", { temperature: 3 }],
    ["model", { model: "gpt-4o" }],
    ["name", { name: "" }],
    ["reasoning_effort", { reasoning_effort: "high", reasoning: { effort: "low" } }],
  ])("rejects a bad %s", (field, body) => {
    expect(issuePaths(createPresetBody, body)).toContain(field);
  });
});
