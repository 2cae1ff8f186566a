import {
  findGenerationResponse,
  generationContentResponse,
  saveGenerationContentResponse,
  type GenerationContentStore,
  type GenerationFinder,
} from "@switchyard/contracts";
import type { InternalClient } from "@switchyard/runtime";

/** Storage's keeper of logged generation content, over its internal routes. */
export const remoteContent = (storage: InternalClient): GenerationContentStore => ({
  async save(entry) {
    if (!(await storage.post("/internal/generation-content", entry, saveGenerationContentResponse))) throw new Error("storage has no generation content route");
  },
  read: async (generationId, organizationId) =>
    (await storage.post("/internal/generation-content/read", { generation_id: generationId, organization_id: organizationId }, generationContentResponse))?.data,
});

/** Media's generations, over its internal route. */
export const remoteMediaGenerations = (media: InternalClient): GenerationFinder => ({
  find: async (id, scope) =>
    (await media.post("/internal/generations/find", { id, organization_id: scope.organizationId, workspace_id: scope.workspaceId ?? null }, findGenerationResponse))?.data ??
    undefined,
});
