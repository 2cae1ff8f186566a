import { describe, expect, it } from "vitest";
import { issuePaths } from "../../../tests/support/schema-checks.js";
import {
  assignKeysBody,
  createGuardrailBody,
  guardrailIdParams,
  listGuardrailsQuery,
  updateGuardrailBody,
  zdrVendors,
} from "./guardrails.js";

const hash = "a".repeat(64);

describe("guardrail bodies", () => {
  const full = {
    name: "EU only",
    description: "Budget and region",
    workspace_id: "3f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c",
    limit_usd: 50,
    reset_interval: "monthly",
    include_byok_in_budgets: true,
    allowed_providers: ["openai", "anthropic"],
    ignored_providers: null,
    allowed_models: ["openai/gpt-4o"],
    ignored_models: null,
    allowed_data_regions: ["europe"],
    enforce_zdr: null,
    enforce_zdr_anthropic: true,
    enforce_zdr_openai: false,
    enforce_zdr_google: true,
    enforce_zdr_xai: null,
    enforce_zdr_other: true,
    enable_free_model_publication: false,
    enable_free_model_training: false,
    enable_paid_model_training: false,
    content_filter_builtins: [{ slug: "email", action: "redact", label: "Emails" }, { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only" }],
    content_filters: [{ pattern: "\\bproject-x\\b", action: "flag", label: null }],
  };

  it("accepts every field, and a name alone", () => {
    expect(issuePaths(createGuardrailBody, full)).toEqual([]);
    expect(issuePaths(createGuardrailBody, { name: "n" })).toEqual([]);
    expect(issuePaths(updateGuardrailBody, {})).toEqual([]);
    expect(issuePaths(updateGuardrailBody, { limit_usd: 10 })).toEqual([]);
  });

  it("has a zero-data-retention switch per named vendor plus other", () => {
    expect([...zdrVendors].sort()).toEqual(["anthropic", "google", "openai", "xai"]);
    for (const vendor of [...zdrVendors, "other"]) {
      expect(issuePaths(createGuardrailBody, { name: "n", [`enforce_zdr_${vendor}`]: "yes" })).toEqual([`enforce_zdr_${vendor}`]);
    }
  });

  it.each([
    ["name", { name: "" }],
    ["name", { name: "x".repeat(201) }],
    ["workspace_id", { workspace_id: "default" }],
    ["limit_usd", { limit_usd: -1, reset_interval: "daily" }],
    ["reset_interval", { limit_usd: 10 }],
    ["limit_usd", { reset_interval: "weekly" }],
    ["reset_interval", { limit_usd: 10, reset_interval: "hourly" }],
    ["allowed_data_regions", { allowed_data_regions: [] }],
    ["allowed_data_regions.0", { allowed_data_regions: ["mars"] }],
    // Whether RE2 can run a pattern is catalog's check (tests/content-filters.test.ts); the schema bounds its length.
    ["content_filters.0.pattern", { content_filters: [{ pattern: "", action: "block" }] }],
    ["content_filters.0.action", { content_filters: [{ pattern: "x", action: "drop" }] }],
    ["content_filter_builtins.0.slug", { content_filter_builtins: [{ slug: "dna", action: "redact" }] }],
    ["content_filter_builtins.0.scan_scope", { content_filter_builtins: [{ slug: "email", action: "redact", scan_scope: "some" }] }],
    ["enable_paid_model_training", { enable_paid_model_training: 1 }],
    ["include_byok_in_budgets", { include_byok_in_budgets: null }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(createGuardrailBody, { name: "n", ...patch })).toContain(field);
  });

  it("rejects unknown fields and workspace moves on update", () => {
    expect(createGuardrailBody.safeParse({ name: "n", budget: 5 }).error?.issues[0]).toMatchObject({ code: "unrecognized_keys" });
    expect(updateGuardrailBody.safeParse({ workspace_id: full.workspace_id }).error?.issues[0]).toMatchObject({
      code: "unrecognized_keys",
    });
  });
});

describe("guardrail parameters and key assignments", () => {
  it("takes a uuid id and pages", () => {
    expect(issuePaths(guardrailIdParams, { id: "3f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c" })).toEqual([]);
    expect(issuePaths(guardrailIdParams, { id: "42" })).toEqual(["id"]);
    expect(issuePaths(listGuardrailsQuery, { offset: "0", limit: "50", workspace_id: "x" })).toEqual(["workspace_id"]);
  });

  it("assigns 1 to 1000 key hashes", () => {
    expect(issuePaths(assignKeysBody, { key_hashes: [hash] })).toEqual([]);
    expect(issuePaths(assignKeysBody, { key_hashes: [] })).toEqual(["key_hashes"]);
    expect(issuePaths(assignKeysBody, { key_hashes: Array(1001).fill(hash) })).toEqual(["key_hashes"]);
    expect(issuePaths(assignKeysBody, { key_hashes: ["sk-or-v1-abc"] })).toEqual(["key_hashes.0"]);
  });
});
