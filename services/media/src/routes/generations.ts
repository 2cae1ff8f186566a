import { findGenerationBody } from "@switchyard/contracts";
import { parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { MediaDeps } from "../deps.js";
import { findGeneration } from "../generations.js";

/** `POST /internal/generations/find`: inference's `GET /generation` asks for the generations media keeps. */
export const findGenerationRoute =
  (deps: MediaDeps): RequestHandler =>
  async (req, res) => {
    const body = parseInput(findGenerationBody, req.body, "body");
    const scope = { organizationId: body.organization_id, workspaceId: body.workspace_id ?? undefined };
    res.json({ data: (await findGeneration(deps.db, scope, body.id)) ?? null });
  };
