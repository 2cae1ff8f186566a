import { z } from "zod";
import { anthropicError, errorEnvelope, oauthError } from "./errors.js";
import type { RouteContract } from "./route.js";
import { alternateRequestBodies, streamingResponses } from "./routes-inference.js";

type JsonSchema = Record<string, unknown>;

const statusText: Record<number, string> = {
  400: "Invalid request parameters",
  401: "Missing or invalid authentication",
  402: "Insufficient credits",
  403: "Only management keys can perform this operation",
  404: "Resource not found",
  408: "Request timed out",
  409: "Resource conflict, try again later",
  413: "Request payload too large",
  422: "Unprocessable request",
  429: "Rate limit exceeded",
  500: "Internal server error",
  502: "Provider returned error",
  503: "Service temporarily unavailable",
  524: "Request timed out, try again later",
  529: "Provider returned error",
};

const mediaType = { json: "application/json", form: "application/x-www-form-urlencoded", multipart: "multipart/form-data" } as const;

export interface AlternateBody {
  mediaType: string;
  schema: z.ZodType;
}

export interface OpenApiOptions {
  /** Defaults to `/api/v1`, the path every route is relative to. */
  serverUrl?: string;
  /** Extra request media types by operation id (e.g. the multipart transcription upload). */
  alternateBodies?: Readonly<Record<string, AlternateBody>>;
  /** `text/event-stream` frame schemas by operation id, for operations that can stream. */
  streams?: Readonly<Record<string, z.ZodType>>;
}

/**
 * Converts zod to JSON Schema 2020-12 (OpenAPI 3.1's dialect). Requests use the input side so
 * query strings show as the strings they are on the wire; `$defs`, which zod emits only for shared
 * or recursive parts, move to `components.schemas` because `#/$defs` would not resolve in place.
 */
function converter(components: Record<string, JsonSchema>) {
  return (schema: z.ZodType, io: "input" | "output", name: string): JsonSchema => {
    const json = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonSchema;
    const { $schema: _dialect, $defs, ...rest } = json as JsonSchema & { $defs?: Record<string, JsonSchema> };
    if (!$defs) return rest;
    const renamed = (key: string) => `${name}_${key}`;
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (node === null || typeof node !== "object") return node;
      return Object.fromEntries(
        Object.entries(node).map(([key, value]) =>
          key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")
            ? [key, `#/components/schemas/${renamed(value.slice("#/$defs/".length))}`]
            : [key, rewrite(value)],
        ),
      );
    };
    for (const [key, def] of Object.entries($defs)) components[renamed(key)] = rewrite(def) as JsonSchema;
    return rewrite(rest) as JsonSchema;
  };
}

/** Query and path schemas become one OpenAPI parameter per property. */
function parameters(json: JsonSchema | undefined, where: "query" | "path"): JsonSchema[] {
  if (!json) return [];
  const { properties = {}, required = [] } = json as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === "path" || required.includes(name),
    schema: property,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
  }));
}

function assertUnique(routes: readonly RouteContract[]): void {
  const ids = new Set<string>();
  const operations = new Set<string>();
  for (const route of routes) {
    const operation = `${route.method.toUpperCase()} ${route.path}`;
    if (ids.has(route.operationId)) throw new Error(`duplicate operationId ${route.operationId}`);
    if (operations.has(operation)) throw new Error(`duplicate operation ${operation}`);
    ids.add(route.operationId);
    operations.add(operation);
  }
}

/** The OpenAPI 3.1 document of the routes, generated from the same zod schemas that validate requests. */
export function buildOpenApiDocument(routes: readonly RouteContract[], options: OpenApiOptions = {}): JsonSchema {
  assertUnique(routes);
  const alternates = options.alternateBodies ?? alternateRequestBodies;
  const streams = options.streams ?? streamingResponses;
  const schemas: Record<string, JsonSchema> = {};
  const toSchema = converter(schemas);
  schemas.ErrorEnvelope = toSchema(errorEnvelope, "output", "ErrorEnvelope");
  schemas.OAuthError = toSchema(oauthError, "output", "OAuthError");
  schemas.AnthropicError = toSchema(anthropicError, "output", "AnthropicError");

  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const id = route.operationId;
    const responses: Record<string, JsonSchema> = {};
    for (const [status, schema] of Object.entries(route.responses)) {
      const content: Record<string, JsonSchema> = {};
      if (schema) content["application/json"] = { schema: toSchema(schema, "output", `${id}_${status}`) };
      const stream = streams[id];
      if (stream && status === "200") content["text/event-stream"] = { schema: toSchema(stream, "output", `${id}_stream`) };
      responses[status] = Object.keys(content).length > 0 ? { description: "Success", content } : { description: "Success" };
    }
    // The token endpoint speaks RFC 6749's error body, the Messages routes Anthropic's; everything else the standard envelope.
    const errorRef = { $ref: `#/components/schemas/${route.bodyType === "form" ? "OAuthError" : route.errorShape === "anthropic" ? "AnthropicError" : "ErrorEnvelope"}` };
    for (const status of route.errors) {
      responses[String(status)] = { description: statusText[status] ?? "Error", content: { "application/json": { schema: errorRef } } };
    }
    const operation: JsonSchema = {
      operationId: id,
      summary: route.summary,
      tags: [route.tag],
      parameters: [
        ...parameters(route.params && toSchema(route.params, "input", `${id}_params`), "path"),
        ...parameters(route.query && toSchema(route.query, "input", `${id}_query`), "query"),
      ],
      responses,
      security: route.auth === "none" ? [] : [{ bearer: [] }],
      "x-switchyard-auth": route.auth,
    };
    if (route.body) {
      const content: Record<string, JsonSchema> = {
        [mediaType[route.bodyType ?? "json"]]: { schema: toSchema(route.body, "input", `${id}_body`) },
      };
      const alternate = alternates[id];
      if (alternate) content[alternate.mediaType] = { schema: toSchema(alternate.schema, "input", `${id}_alternate`) };
      operation.requestBody = { required: true, content };
    }
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Switchyard",
      version: "1.0.0",
      description: "Self-hostable model gateway, wire-compatible with OpenRouter.",
    },
    servers: [{ url: options.serverUrl ?? "/api/v1" }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key or access token" } },
      schemas,
    },
    paths,
  };
}
