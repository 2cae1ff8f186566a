import {
  containerFile,
  containerFileParams,
  containerParams,
  listContainerFilesQuery,
  listContainerFilesResponse,
} from "./containers.js";
import { listFilesQuery, listFilesResponse } from "./files.js";
import { defineRoute, type RouteContract } from "./route.js";

/** Workspace files and sandbox container files. Operation ids follow OpenRouter's. */
export const storageRoutes = [
  defineRoute({
    operationId: "listFiles",
    method: "get",
    path: "/files",
    summary: "List the files of a workspace (or of an external provider, with provider=)",
    tag: "Files",
    auth: "any",
    query: listFilesQuery,
    responses: { 200: listFilesResponse },
    errors: [400, 401, 403, 429, 500, 502, 503],
  }),
  defineRoute({
    operationId: "listContainerFiles",
    method: "get",
    path: "/containers/{container_id}/files",
    summary: "List the files produced in a sandbox container, in path order",
    tag: "Containers",
    auth: "any",
    params: containerParams,
    query: listContainerFilesQuery,
    responses: { 200: listContainerFilesResponse },
    errors: [400, 401, 403, 429, 500, 503],
  }),
  defineRoute({
    operationId: "getContainerFile",
    method: "get",
    path: "/containers/{container_id}/files/{file_id}",
    summary: "Get a container file's metadata",
    tag: "Containers",
    auth: "any",
    params: containerFileParams,
    responses: { 200: containerFile },
    errors: [400, 401, 403, 404, 429, 500, 503],
  }),
] as const satisfies readonly RouteContract[];
