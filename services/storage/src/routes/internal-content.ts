import { readGenerationContentBody, saveGenerationContentBody } from "@switchyard/contracts";
import { notFound, parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { StorageDeps } from "../deps.js";
import { readContent, saveContent } from "../generation-content/records.js";

/** `POST /internal/generation-content`: inference keeps a logged generation's content. */
export const saveContentRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    await saveContent(deps, parseInput(saveGenerationContentBody, req.body, "body"), deps.contentRetentionMs);
    res.json({ saved: true });
  };

/** `POST /internal/generation-content/read`: inference answers `GET /generation/content` with it. */
export const readContentRoute =
  (deps: StorageDeps): RequestHandler =>
  async (req, res) => {
    const body = parseInput(readGenerationContentBody, req.body, "body");
    const content = await readContent(deps, body.generation_id, body.organization_id);
    if (!content) throw notFound("No content is kept for this generation");
    res.json({ data: content });
  };
