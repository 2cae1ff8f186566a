import { z } from "zod";
import { errorEnvelope, oauthError } from "./errors.js";
import type { RouteContract } from "./route.js";

type JsonSchema = Record<string, unknown>;

const statusText: Record<number, string> = {
  400: "Invalid request parameters",
  401: "Missing or invalid authentication",
  402: "Insufficient credits",
  403: "Only management keys can perform this operation",
  404: "Resource not found",
  409: "Resource conflict, try again later",
  413: "Request payload too large",
  429: "Rate limit exceeded",
  500: "Internal server error",
  502: "Provider returned error",
  503: "Service temporarily unavailable",
  524: "Request timed out",
  529: "Provider returned error",
};

const toSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonSchema;
  return rest;
};

/** Query and path schemas become one OpenAPI parameter per property. */
function parameters(schema: z.ZodType | undefined, where: "query" | "path"): JsonSchema[] {
  if (!schema) return [];
  const json = toSchema(schema, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === "path" || (json.required ?? []).includes(name),
    schema: property,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
  }));
}

const mediaType = { json: "application/json", form: "application/x-www-form-urlencoded", multipart: "multipart/form-data" } as const;

/** The OpenAPI 3.1 document of the routes, generated from the same zod schemas that validate requests. */
export function buildOpenApiDocument(routes: readonly RouteContract[], options: { serverUrl?: string } = {}): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const errorBody = toSchema(errorEnvelope, "output");
  const oauthErrorBody = toSchema(oauthError, "output");
  for (const route of routes) {
    const responses: Record<string, JsonSchema> = {};
    for (const [status, schema] of Object.entries(route.responses)) {
      responses[status] = schema
        ? { description: "Success", content: { "application/json": { schema: toSchema(schema, "output") } } }
        : { description: "Success" };
    }
    for (const status of route.errors) {
      const body = route.bodyType === "form" ? oauthErrorBody : errorBody;
      responses[String(status)] = { description: statusText[status] ?? "Error", content: { "application/json": { schema: body } } };
    }
    const operation: JsonSchema = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      parameters: [...parameters(route.params, "path"), ...parameters(route.query, "query")],
      responses,
      security: route.auth === "none" ? [] : [{ bearer: [] }],
      ...(route.auth === "management" ? { "x-switchyard-auth": "management key" } : {}),
    };
    if (route.body) {
      operation.requestBody = {
        required: true,
        content: { [mediaType[route.bodyType ?? "json"]]: { schema: toSchema(route.body, "input") } },
      };
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
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key or access token" } } },
    paths,
  };
}
