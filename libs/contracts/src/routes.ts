import {
  apiKeyResponse,
  createApiKeyBody,
  createApiKeyResponse,
  currentKeyResponse,
  deleteApiKeyResponse,
  keyHashParams,
  listApiKeysQuery,
  listApiKeysResponse,
  updateApiKeyBody,
} from "./api-key.js";
import { defineRoute, type RouteContract } from "./route.js";
import { authRoutes } from "./routes-auth.js";
import { catalogRoutes } from "./routes-catalog.js";
import { guardrailRoutes } from "./routes-guardrails.js";
import { inferenceRoutes } from "./routes-inference.js";
import { storageRoutes } from "./routes-storage.js";
import {
  createWorkspaceBody,
  deleteWorkspaceResponse,
  listWorkspacesQuery,
  listWorkspacesResponse,
  updateWorkspaceBody,
  workspaceIdParams,
  workspaceResponse,
} from "./workspace.js";

const keys = [
  defineRoute({
    operationId: "listKeys",
    method: "get",
    path: "/keys",
    summary: "List the organization's API keys",
    tag: "API keys",
    auth: "management",
    query: listApiKeysQuery,
    responses: { 200: listApiKeysResponse },
    errors: [400, 401, 403, 429, 500],
  }),
  defineRoute({
    operationId: "createKey",
    method: "post",
    path: "/keys",
    summary: "Create an API key; the secret is returned once",
    tag: "API keys",
    auth: "management",
    body: createApiKeyBody,
    responses: { 201: createApiKeyResponse },
    errors: [400, 401, 403, 413, 429, 500],
  }),
  defineRoute({
    operationId: "getKey",
    method: "get",
    path: "/keys/{hash}",
    summary: "Get an API key",
    tag: "API keys",
    auth: "management",
    params: keyHashParams,
    responses: { 200: apiKeyResponse },
    errors: [400, 401, 403, 404, 429, 500],
  }),
  defineRoute({
    operationId: "updateKey",
    method: "patch",
    path: "/keys/{hash}",
    summary: "Update an API key",
    tag: "API keys",
    auth: "management",
    params: keyHashParams,
    body: updateApiKeyBody,
    responses: { 200: apiKeyResponse },
    errors: [400, 401, 403, 404, 429, 500],
  }),
  defineRoute({
    operationId: "deleteKey",
    method: "delete",
    path: "/keys/{hash}",
    summary: "Delete an API key",
    tag: "API keys",
    auth: "management",
    params: keyHashParams,
    responses: { 200: deleteApiKeyResponse },
    errors: [400, 401, 403, 404, 429, 500],
  }),
  defineRoute({
    operationId: "getCurrentKey",
    method: "get",
    path: "/key",
    summary: "Get the calling key's own record",
    tag: "API keys",
    auth: "any",
    responses: { 200: currentKeyResponse },
    errors: [401, 429, 500],
  }),
] as const satisfies readonly RouteContract[];

const workspaces = [
  defineRoute({
    operationId: "listWorkspaces",
    method: "get",
    path: "/workspaces",
    summary: "List the organization's workspaces",
    tag: "Workspaces",
    auth: "management",
    query: listWorkspacesQuery,
    responses: { 200: listWorkspacesResponse },
    errors: [400, 401, 403, 429, 500],
  }),
  defineRoute({
    operationId: "createWorkspace",
    method: "post",
    path: "/workspaces",
    summary: "Create a workspace",
    tag: "Workspaces",
    auth: "management",
    body: createWorkspaceBody,
    responses: { 201: workspaceResponse },
    errors: [400, 401, 403, 409, 413, 429, 500],
  }),
  defineRoute({
    operationId: "getWorkspace",
    method: "get",
    path: "/workspaces/{id}",
    summary: "Get a workspace",
    tag: "Workspaces",
    auth: "management",
    params: workspaceIdParams,
    responses: { 200: workspaceResponse },
    errors: [400, 401, 403, 404, 429, 500],
  }),
  defineRoute({
    operationId: "updateWorkspace",
    method: "patch",
    path: "/workspaces/{id}",
    summary: "Update a workspace's name, provider preferences and privacy settings",
    tag: "Workspaces",
    auth: "management",
    params: workspaceIdParams,
    body: updateWorkspaceBody,
    responses: { 200: workspaceResponse },
    errors: [400, 401, 403, 404, 409, 429, 500],
  }),
  defineRoute({
    operationId: "deleteWorkspace",
    method: "delete",
    path: "/workspaces/{id}",
    summary: "Delete a workspace that has no keys",
    tag: "Workspaces",
    auth: "management",
    params: workspaceIdParams,
    responses: { 200: deleteWorkspaceResponse },
    errors: [400, 401, 403, 404, 409, 429, 500],
  }),
] as const satisfies readonly RouteContract[];

const meta = [
  defineRoute({
    operationId: "getOpenApiDocument",
    method: "get",
    path: "/openapi.json",
    summary: "This API's OpenAPI 3.1 description",
    tag: "Meta",
    auth: "none",
    responses: { 200: null },
    errors: [],
  }),
] as const satisfies readonly RouteContract[];

/** Every operation of the public API. */
export const routes: readonly RouteContract[] = [
  ...keys,
  ...workspaces,
  ...authRoutes,
  ...inferenceRoutes,
  ...storageRoutes,
  ...catalogRoutes,
  ...guardrailRoutes,
  ...meta,
];
