import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./openapi.js";
import type { RouteContract } from "./route.js";
import { routes } from "./routes.js";

interface Operation {
  operationId: string;
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
  security: unknown[];
  "x-switchyard-auth": string;
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
  paths: Record<string, Record<string, Operation>>;
}

const doc = buildOpenApiDocument(routes) as unknown as Document;
const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
);
const find = (method: string, path: string): Operation => {
  const operation = doc.paths[path]?.[method];
  if (!operation) throw new Error(`missing ${method} ${path}`);
  return operation;
};

describe("OpenAPI document", () => {
  it("describes Switchyard 1.0.0 under /api/v1 with bearer authentication", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "Switchyard", version: "1.0.0" });
    expect(doc.servers).toEqual([{ url: "/api/v1" }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const custom = buildOpenApiDocument(routes, { serverUrl: "https://gw.example.com/api/v1" }) as unknown as Document;
    expect(custom.servers).toEqual([{ url: "https://gw.example.com/api/v1" }]);
  });

  it("lists every route exactly once with unique operation ids", () => {
    expect(operations).toHaveLength(routes.length);
    for (const route of routes) expect(find(route.method, route.path).operationId).toBe(route.operationId);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("covers the spec's operations and the design's extensions", () => {
    const expected = [
      "get /keys", "post /keys", "get /keys/{hash}", "patch /keys/{hash}", "delete /keys/{hash}", "get /key",
      "get /workspaces", "post /workspaces", "get /workspaces/{id}", "patch /workspaces/{id}", "delete /workspaces/{id}",
      "post /auth/keys/code", "post /auth/keys", "post /oauth/token", "get /oauth/jwks",
      "get /federation-policies", "post /federation-policies", "get /federation-policies/{id}", "patch /federation-policies/{id}",
      "delete /federation-policies/{id}",
      "post /chat/completions", "post /responses", "post /completions", "post /messages", "post /messages/count_tokens", "post /audio/transcriptions", "post /images", "get /generation", "get /generation/content",
      "post /embeddings", "get /embeddings/models", "post /rerank", "post /audio/speech",
      "get /activity", "get /activity/daily", "get /generations", "get /credits", "put /credits",
      "get /workspaces/{id}/provider-keys", "put /workspaces/{id}/provider-keys/{provider}", "delete /workspaces/{id}/provider-keys/{provider}",
      "post /images/generations", "post /catalog/reload",
      "get /files", "post /files", "get /files/{file_id}", "get /files/{file_id}/content", "delete /files/{file_id}",
      "get /containers/{container_id}/files", "get /containers/{container_id}/files/{file_id}", "get /containers/{container_id}/files/{file_id}/content",
      "get /models", "get /models/user", "get /models/{author}/{slug}/endpoints", "get /providers",
      "get /models/count", "get /model/{author}/{slug}", "get /endpoints/zdr", "get /images/models", "get /images/models/{author}/{slug}/endpoints",
      "get /presets", "get /presets/{slug}", "get /presets/{slug}/versions", "get /presets/{slug}/versions/{version}",
      "post /presets/{slug}/chat/completions", "post /presets", "post /presets/{slug}/designated-version", "delete /presets/{slug}",
      "get /guardrails", "post /guardrails", "get /guardrails/{id}", "patch /guardrails/{id}", "delete /guardrails/{id}",
      "get /guardrails/assignments/keys", "get /guardrails/{id}/assignments/keys", "post /guardrails/{id}/assignments/keys",
      "post /guardrails/{id}/assignments/keys/remove", "get /openapi.json",
    ];
    expect(operations.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([...expected].sort());
  });

  it("applies the spec's authentication rules", () => {
    const auth = (method: string, path: string) => find(method, path)["x-switchyard-auth"];
    for (const [method, path] of [["patch", "/keys/{hash}"], ["post", "/auth/keys/code"], ["get", "/guardrails/{id}"], ["post", "/guardrails"], ["get", "/activity"], ["get", "/generations"], ["put", "/credits"]]) {
      expect(auth(method!, path!)).toBe("management");
    }
    for (const path of ["/chat/completions", "/audio/transcriptions", "/images"]) expect(auth("post", path)).toBe("inference");
    for (const path of ["/files", "/models/user", "/presets/{slug}", "/containers/{container_id}/files", "/key", "/credits"]) expect(auth("get", path)).toBe("any");
    for (const [method, path] of [["post", "/oauth/token"], ["get", "/oauth/jwks"], ["post", "/auth/keys"], ["get", "/openapi.json"]]) {
      expect(auth(method!, path!)).toBe("none");
      expect(find(method!, path!).security).toEqual([]);
    }
    expect(find("get", "/files").security).toEqual([{ bearer: [] }]);
  });

  it("declares every path template variable as a required path parameter", () => {
    for (const { path, operation } of operations) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const declared = operation.parameters.filter((p) => p.in === "path");
      expect(declared.map((p) => p.name).sort()).toEqual(names.sort());
      expect(declared.every((p) => p.required)).toBe(true);
    }
    expect(find("get", "/models/user").parameters.map((p) => p.name)).toEqual(["offset", "limit", "output_modalities"]);
  });

  it("documents request media types, streams and error envelopes", () => {
    expect(Object.keys(find("post", "/oauth/token").requestBody?.content ?? {})).toEqual(["application/x-www-form-urlencoded"]);
    expect(Object.keys(find("post", "/audio/transcriptions").requestBody?.content ?? {})).toEqual(["application/json", "multipart/form-data"]);
    expect(Object.keys(find("post", "/files").requestBody?.content ?? {})).toEqual(["multipart/form-data"]);
    expect(find("get", "/files/{file_id}/content").responses["200"]).toEqual({ description: "Success" });
    expect(Object.keys(find("post", "/chat/completions").responses["200"]?.content ?? {})).toEqual(["application/json", "text/event-stream"]);
    const oauthError = find("post", "/oauth/token").responses["400"]?.content?.["application/json"]?.schema;
    expect(oauthError).toEqual({ $ref: "#/components/schemas/OAuthError" });
    const envelope = find("post", "/audio/transcriptions").responses["529"]?.content?.["application/json"]?.schema;
    expect(envelope).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
    const anthropic = find("post", "/messages").responses["401"]?.content?.["application/json"]?.schema;
    expect(anthropic).toEqual({ $ref: "#/components/schemas/AnthropicError" });
    expect(Object.keys(find("post", "/auth/keys/code").responses)).toEqual(["200", "400", "401", "403", "409", "500"]);
  });

  it("is plain JSON, stable between builds, with every $ref resolvable", () => {
    const json = JSON.stringify(doc);
    expect(JSON.parse(json)).toEqual(doc);
    expect(JSON.stringify(buildOpenApiDocument(routes))).toBe(json);
    const refs = [...json.matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1] ?? "");
    for (const ref of refs) {
      expect(ref.startsWith("#/components/schemas/")).toBe(true);
      expect(doc.components.schemas).toHaveProperty(ref.slice("#/components/schemas/".length));
    }
    expect(json).not.toContain("#/$defs/");
  });

  it("refuses duplicate operations", () => {
    const [first] = routes as [RouteContract];
    expect(() => buildOpenApiDocument([first, { ...first, path: "/other" }])).toThrow(/duplicate operationId/);
    expect(() => buildOpenApiDocument([first, { ...first, operationId: "other" }])).toThrow(/duplicate operation/);
  });
});
