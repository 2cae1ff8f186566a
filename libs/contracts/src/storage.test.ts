import { describe, expect, it } from "vitest";
import { issuePaths } from "../../../tests/support/schema-checks.js";
import {
  containerFile,
  containerFileParams,
  containerParams,
  listContainerFilesQuery,
  listContainerFilesResponse,
  type ContainerFile,
} from "./containers.js";
import { listFilesQuery, listFilesResponse, workspaceFile, type WorkspaceFile } from "./files.js";

const file: WorkspaceFile = {
  _shape: "openrouter",
  id: "or_file_2b7c9d1e",
  filename: "notes.pdf",
  mime_type: "application/pdf",
  size_bytes: 2048,
  created_at: "2026-01-01T00:00:00.000Z",
  downloadable: true,
  type: "file",
};

describe("GET /files query", () => {
  it("accepts OpenRouter's parameter names", () => {
    expect(issuePaths(listFilesQuery, {})).toEqual([]);
    const own = { limit: "1000", cursor: "opaque", workspace_id: "3f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c", after: "x", after_id: "y", order: "asc" };
    expect(listFilesQuery.parse(own)).toMatchObject({ limit: 1000, order: "asc" });
    expect(issuePaths(listFilesQuery, { provider: "anthropic", before_id: "file_1", order: "desc" })).toEqual([]);
    expect(issuePaths(listFilesQuery, { provider: "openai", limit: "1" })).toEqual([]);
  });

  it.each([
    ["limit", { limit: "0" }],
    ["limit", { limit: "1001" }],
    ["limit", { limit: "ten" }],
    ["workspace_id", { workspace_id: "nope" }],
    ["provider", { provider: "google" }],
    ["order", { order: "sideways" }],
    ["before_id", { before_id: "file_1" }],
    ["order", { order: "desc" }],
  ])("rejects a bad %s", (field, query) => {
    expect(issuePaths(listFilesQuery, query)).toContain(field);
  });
});

describe("file records and list shapes", () => {
  it("accepts the three shapes, tagged by _shape", () => {
    const page = { first_id: file.id, last_id: file.id, has_more: false };
    expect(issuePaths(listFilesResponse, { _shape: "openrouter", data: [file], cursor: null, ...page })).toEqual([]);
    const openai = { _shape: "openai", id: "file-abc", object: "file", bytes: 1, created_at: 1, filename: "a", purpose: "user_data", status: "processed" };
    expect(issuePaths(listFilesResponse, { _shape: "openai", object: "list", data: [openai], ...page })).toEqual([]);
    expect(issuePaths(listFilesResponse, { _shape: "anthropic", data: [{ ...file, _shape: "anthropic", id: "file_01" }], ...page })).toEqual([]);
  });

  it.each([
    ["id", { id: "file_123" }],
    ["size_bytes", { size_bytes: -1 }],
    ["type", { type: "folder" }],
    ["_shape", { _shape: "s3" }],
  ])("rejects a bad %s", (field, patch) => {
    expect(issuePaths(workspaceFile, { ...file, ...patch })).toContain(field);
  });

  it("requires the cursor on the service's own shape", () => {
    expect(issuePaths(listFilesResponse, { _shape: "openrouter", data: [], first_id: null, last_id: null, has_more: false })).toEqual([
      "cursor",
    ]);
  });
});

describe("container files", () => {
  const record: ContainerFile = {
    id: `cfile_${Buffer.from("out/report.csv").toString("base64url")}`,
    object: "container.file",
    container_id: "sess_abc-r1f2e3",
    path: "out/report.csv",
    bytes: 10,
    created_at: 1_767_225_600,
    source: "assistant",
  };

  it("accepts a record and a page", () => {
    expect(issuePaths(containerFile, record)).toEqual([]);
    const page = { object: "list", data: [record], first_id: record.id, last_id: record.id, has_more: true };
    expect(issuePaths(listContainerFilesResponse, page)).toEqual([]);
  });

  it.each([
    ["id", { id: "file_1" }],
    ["object", { object: "file" }],
    ["source", { source: "user" }],
    ["created_at", { created_at: "2026-01-01T00:00:00Z" }],
    ["bytes", { bytes: 1.5 }],
  ])("rejects a record with a bad %s", (field, patch) => {
    expect(issuePaths(containerFile, { ...record, ...patch })).toContain(field);
  });

  it("defaults limit to 100 and bounds it to 1..1000", () => {
    expect(listContainerFilesQuery.parse({})).toEqual({ limit: 100 });
    expect(listContainerFilesQuery.parse({ limit: "1000", after: record.id })).toEqual({ limit: 1000, after: record.id });
    expect(issuePaths(listContainerFilesQuery, { limit: "0" })).toEqual(["limit"]);
    expect(issuePaths(listContainerFilesQuery, { limit: "1001" })).toEqual(["limit"]);
    expect(issuePaths(listContainerFilesQuery, { after: "last" })).toEqual(["after"]);
  });

  it("validates the path parameters", () => {
    expect(issuePaths(containerParams, { container_id: "sess_abc-r1f2e3" })).toEqual([]);
    expect(issuePaths(containerParams, { container_id: "" })).toContain("container_id");
    expect(issuePaths(containerParams, { container_id: "../etc" })).toEqual(["container_id"]);
    expect(issuePaths(containerFileParams, { container_id: "sess_a", file_id: "report.csv" })).toEqual(["file_id"]);
  });
});
