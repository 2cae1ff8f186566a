import { knownProviderBody, resolveModelBody } from "@switchyard/contracts";
import { parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { CatalogDeps } from "../deps.js";
import { resolveModel } from "../policy/resolve-model.js";

/** `POST /internal/models/resolve`, for inference and media. */
export const resolveModelRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const body = parseInput(resolveModelBody, req.body, "body");
    const data = await resolveModel(deps, {
      model: body.model,
      defaultFor: body.default_for,
      keyHash: body.key_hash,
      workspaceId: body.workspace_id,
      organizationId: body.organization_id,
      host: body.host,
    });
    res.json({ data });
  };

/** `POST /internal/providers/known`, for identity, before it stores a workspace's own key for a provider. */
export const knownProviderRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const { slug } = parseInput(knownProviderBody, req.body, "body");
    res.json({ known: deps.catalog.current().providersBySlug.has(slug) });
  };
