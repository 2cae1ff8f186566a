import { generationQuery } from "@switchyard/contracts";
import { callerOf, parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { InferenceDeps } from "../deps.js";
import { getGeneration, rowOf, toGeneration } from "../generations/store.js";

/** `GET /generation?id=`: the stored record of one generation of the caller's organization. */
export const generationRoute =
  (deps: InferenceDeps): RequestHandler =>
  async (req, res) => {
    const caller = callerOf(res);
    const { id } = parseInput(generationQuery, req.query, "query");
    // A generation answered moments ago may still be waiting for its batch to commit.
    const queued = deps.recorder.pending(id);
    if (queued && queued.generation.organizationId === caller.organizationId) return void res.json({ data: toGeneration(rowOf(queued.generation, queued.at)) });
    res.json({ data: await getGeneration(deps.db, caller.organizationId, id) });
  };
