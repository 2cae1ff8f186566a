import { generationContentQuery, generationQuery } from "@switchyard/contracts";
import { callerOf, notFound, parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { InferenceDeps } from "../deps.js";
import { findGeneration, getGeneration, readableBy, rowOf, toGeneration } from "./store.js";

/**
 * `GET /generation?id=`: the stored record of one generation, inference's own or media's (transcription,
 * images, speech). A workspace's key reads only its own workspace's generations, as with files and
 * presets; a management key reads its whole organization's.
 */
export const generationRoute =
  (deps: InferenceDeps): RequestHandler =>
  async (req, res) => {
    const caller = callerOf(res);
    const { id } = parseInput(generationQuery, req.query, "query");
    // A generation answered moments ago may still be waiting for its batch to commit.
    const queued = deps.recorder.pending(id);
    const scope = { organizationId: caller.organizationId, workspaceId: caller.management ? undefined : caller.workspaceId };
    if (queued && readableBy(scope, queued.generation)) return void res.json({ data: toGeneration(rowOf(queued.generation, queued.at)) });
    const found = (await findGeneration(deps.db, scope, id)) ?? (await deps.mediaGenerations.find(id, scope));
    if (!found) throw notFound("Generation not found");
    res.json({ data: found });
  };

/**
 * `GET /generation/content?id=`: what input/output logging kept of a generation (the SDK's
 * `generations.listGenerationContent`), for the callers who may read its record. 404 when its workspace
 * does not log, the generation was not sampled, or its retention has passed.
 */
export const generationContentRoute =
  (deps: InferenceDeps): RequestHandler =>
  async (req, res) => {
    const caller = callerOf(res);
    const { id } = parseInput(generationContentQuery, req.query, "query");
    const scope = { organizationId: caller.organizationId, workspaceId: caller.management ? undefined : caller.workspaceId };
    const queued = deps.recorder.pending(id);
    if (!(queued && readableBy(scope, queued.generation))) await getGeneration(deps.db, scope, id);
    const content = await deps.content.read(id, caller.organizationId);
    if (!content) throw notFound("No content is kept for this generation: its workspace does not log inputs and outputs, it was not sampled, or its retention has passed");
    res.json({ data: content });
  };
