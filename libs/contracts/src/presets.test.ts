import { describe, expect, it } from "vitest";
import { issuePaths } from "../../../tests/support/schema-checks.js";
import { presetSlugParams } from "./presets.js";
import { createWorkspaceBody, updateWorkspaceBody } from "./workspace.js";

describe("preset slugs", () => {
  it("refuses the URL dot segments . and .., and takes dots elsewhere", () => {
    expect(issuePaths(presetSlugParams, { slug: "." })).toContain("slug");
    expect(issuePaths(presetSlugParams, { slug: ".." })).toContain("slug");
    expect(issuePaths(presetSlugParams, { slug: "..." })).toEqual([]);
    expect(issuePaths(presetSlugParams, { slug: ".a." })).toEqual([]);
  });
});

describe("workspace default models", () => {
  it("refuses a preset reference, naming the field", () => {
    expect(issuePaths(createWorkspaceBody, { name: "w", slug: "w", default_text_model: "@preset/p" })).toContain("default_text_model");
    expect(issuePaths(updateWorkspaceBody, { default_image_model: "@preset/p" })).toContain("default_image_model");
    expect(issuePaths(updateWorkspaceBody, { default_text_model: "vendor/a", default_image_model: null })).toEqual([]);
  });
});
