import {
  BulkAssignKeysRequest$outboundSchema,
  ContainerFile$inboundSchema,
  ContainerFileListResponse$inboundSchema,
  CreateGuardrailRequest$outboundSchema,
  FileDeleteResponse$inboundSchema,
  FileListResponse$inboundSchema,
  FileResponse$inboundSchema,
  TokenExchangeRequest$outboundSchema,
  TokenExchangeResponse$inboundSchema,
  UpdateGuardrailRequest$outboundSchema,
} from "@openrouter/sdk/models";
import {
  CreateAuthKeysCodeRequestBody$outboundSchema,
  CreateAuthKeysCodeResponse$inboundSchema,
  ExchangeAuthCodeForAPIKeyRequestBody$outboundSchema,
  ExchangeAuthCodeForAPIKeyResponse$inboundSchema,
  ListContainerFilesRequest$outboundSchema,
  ListFilesRequest$outboundSchema,
  ListModelsUserRequest$outboundSchema,
} from "@openrouter/sdk/models/operations";
import { describe, expect, it } from "vitest";
import { issuePaths, wire, expectBothAccept } from "../../../tests/support/schema-checks.js";
import {
  createAuthCodeBody,
  createAuthCodeResponse,
  exchangeAuthCodeBody,
  exchangeAuthCodeResponse,
  type AuthCode,
} from "./auth-code.js";
import { containerFile, listContainerFilesQuery, listContainerFilesResponse, type ContainerFile } from "./containers.js";
import { deletedFile, fileResponse, listFilesQuery, listFilesResponse, type DeletedFile, type ListFilesResponse, type WorkspaceFile } from "./files.js";
import { assignKeysBody, createGuardrailBody, updateGuardrailBody } from "./guardrails.js";
import { listUserModelsQuery } from "./models.js";
import { tokenExchangeBody, tokenExchangeResponse, type TokenExchangeResponse } from "./oauth-token.js";

/** Query values travel as strings; the SDK's query encoder stringifies what its schema outputs. */
const asQuery = (value: unknown, keys: string[]): Record<string, string> =>
  Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key, v]) => keys.includes(key) && v !== undefined && v !== null)
      .map(([key, v]) => [key, String(v)]),
  );

const authCode: AuthCode = { id: "auth_code_xyz789", app_id: 12345, created_at: "2026-01-01T00:00:00.000Z" };
const tokenExchange: TokenExchangeResponse = {
  access_token: "eyJhbGciOiJFUzI1NiJ9.e30.sig",
  issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
  token_type: "Bearer",
  expires_in: 900,
  scope: "inference",
};
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
const page = { first_id: "a", last_id: "b", has_more: true };
const filePages: ListFilesResponse[] = [
  { _shape: "openrouter", data: [file], cursor: "next", ...page },
  {
    _shape: "openai",
    object: "list",
    data: [{ _shape: "openai", id: "file-abc", object: "file", bytes: 5, created_at: 1_767_225_600, filename: "a.jsonl", purpose: "batch", status: "processed" }],
    ...page,
  },
  { _shape: "anthropic", data: [{ ...file, _shape: "anthropic", id: "file_011CNha8iCJcU1wXNR6q4V8w" }], ...page },
];
const container: ContainerFile = {
  id: `cfile_${Buffer.from("out/report.csv").toString("base64url")}`,
  object: "container.file",
  container_id: "sess_abc",
  path: "out/report.csv",
  bytes: 10,
  created_at: 1_767_225_600,
  source: "assistant",
};

describe("our responses pass the SDK's validation", () => {
  it("auth code, PKCE exchange and token exchange", () => {
    expectBothAccept(createAuthCodeResponse, CreateAuthKeysCodeResponse$inboundSchema, { data: authCode });
    expectBothAccept(exchangeAuthCodeResponse, ExchangeAuthCodeForAPIKeyResponse$inboundSchema, { key: "sk-sy-v1-x", user_id: null });
    expectBothAccept(tokenExchangeResponse, TokenExchangeResponse$inboundSchema, tokenExchange);
    expect(issuePaths(createAuthCodeResponse, { data: { ...authCode, app_id: "1" } })).toEqual(["data.app_id"]);
  });

  it("the three /files shapes, each recognised rather than falling back to unknown", () => {
    for (const sample of filePages) {
      const parsed = expectBothAccept(listFilesResponse, FileListResponse$inboundSchema, sample) as { shape: string; isUnknown?: boolean };
      expect(parsed.isUnknown).toBeUndefined();
      expect(parsed.shape).toBe(sample._shape);
    }
  });

  it("one file and a deleted file, in each store's shape", () => {
    for (const sample of filePages.map((list) => list.data[0]!)) {
      const parsed = expectBothAccept(fileResponse, FileResponse$inboundSchema, sample) as { shape: string; isUnknown?: boolean };
      expect(parsed.isUnknown).toBeUndefined();
      expect(parsed.shape).toBe(sample._shape);
    }
    const deleted: DeletedFile[] = [
      { _shape: "openrouter", id: file.id, type: "file_deleted" },
      { _shape: "openai", id: "file-abc", object: "file", deleted: true },
      { _shape: "anthropic", id: "file_011CNha8iCJcU1wXNR6q4V8w", type: "file_deleted" },
    ];
    for (const sample of deleted) expectBothAccept(deletedFile, FileDeleteResponse$inboundSchema, sample);
  });

  it("container files, including an empty page", () => {
    expectBothAccept(containerFile, ContainerFile$inboundSchema, container);
    const list = { object: "list", data: [container], first_id: container.id, last_id: container.id, has_more: false };
    expectBothAccept(listContainerFilesResponse, ContainerFileListResponse$inboundSchema, list);
    expectBothAccept(listContainerFilesResponse, ContainerFileListResponse$inboundSchema, { ...list, data: [], first_id: null, last_id: null });
  });
});

describe("requests the SDK sends pass our validation", () => {
  it("auth code creation and PKCE exchange", () => {
    const body = CreateAuthKeysCodeRequestBody$outboundSchema.parse({
      callbackUrl: "http://localhost:3000/cb",
      codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      codeChallengeMethod: "S256",
      expiresAt: new Date("2027-12-31T23:59:59Z"),
      keyLabel: "CLI",
      limit: 5,
      usageLimitType: "weekly",
      workspaceId: "3f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c",
    });
    expect(issuePaths(createAuthCodeBody, wire(body))).toEqual([]);
    const exchange = ExchangeAuthCodeForAPIKeyRequestBody$outboundSchema.parse({
      code: "c",
      codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    });
    expect(issuePaths(exchangeAuthCodeBody, wire(exchange))).toEqual([]);
  });

  it("token exchange form fields", () => {
    const form = TokenExchangeRequest$outboundSchema.parse({
      grantType: "urn:ietf:params:oauth:grant-type:token-exchange",
      subjectToken: "eyJ.e30.sig",
      subjectTokenType: "urn:ietf:params:oauth:token-type:jwt",
      federationPolicyId: "7d0c6f8e-2b1a-4c3d-8e9f-0a1b2c3d4e5f",
      requestedTokenType: "urn:ietf:params:oauth:token-type:access_token",
      scope: "inference",
    });
    expect(issuePaths(tokenExchangeBody, wire(form))).toEqual([]);
  });

  it("list queries, with the defaults the SDK fills in", () => {
    const files = ListFilesRequest$outboundSchema.parse({ limit: 50, provider: "anthropic", beforeId: "file_1", order: "desc" });
    expect(issuePaths(listFilesQuery, asQuery(files, ["limit", "cursor", "workspace_id", "provider", "after", "after_id", "before_id", "order"]))).toEqual([]);
    const models = ListModelsUserRequest$outboundSchema.parse({ outputModalities: "text,image" });
    expect(listUserModelsQuery.parse(asQuery(models, ["offset", "limit", "output_modalities"]))).toEqual({
      offset: 0,
      limit: 500,
      output_modalities: ["text", "image"],
    });
    const containers = ListContainerFilesRequest$outboundSchema.parse({ containerId: "sess_a" });
    expect(listContainerFilesQuery.parse(asQuery(containers, ["limit", "after"]))).toEqual({ limit: 100 });
  });

  it("guardrail bodies and key assignment", () => {
    const create = CreateGuardrailRequest$outboundSchema.parse({
      name: "g",
      limitUsd: 10,
      resetInterval: "monthly",
      enforceZdrOpenai: true,
      allowedDataRegions: ["us"],
      contentFilterBuiltins: [{ slug: "email", action: "redact", scanScope: "all_messages" }],
      contentFilters: [{ pattern: "secret", action: "block" }],
    });
    expect(issuePaths(createGuardrailBody, wire(create))).toEqual([]);
    const update = UpdateGuardrailRequest$outboundSchema.parse({ description: null, enforceZdrXai: false, ignoredModels: ["x/y"] });
    expect(issuePaths(updateGuardrailBody, wire(update))).toEqual([]);
    const assign = BulkAssignKeysRequest$outboundSchema.parse({ keyHashes: ["b".repeat(64)] });
    expect(issuePaths(assignKeysBody, wire(assign))).toEqual([]);
  });
});
