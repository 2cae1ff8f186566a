import { describeKeysBody, holdBody, releaseHoldBody, workspacePolicyBody } from "@switchyard/contracts";
import { notFound, parseInput, type Db, type Queryable } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { describeKeys, workspacePolicy } from "../internal.js";
import { placeHold, releaseHold } from "../spend/holds.js";
import type { LimitCache } from "../spend/limit-cache.js";

/** `POST /internal/workspaces/policy` */
export const workspacePolicyRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    const { workspace_id } = parseInput(workspacePolicyBody, req.body, "body");
    const policy = await workspacePolicy(db, workspace_id);
    if (!policy) throw notFound("Workspace not found");
    res.json({ data: policy });
  };

/** `POST /internal/keys/describe` */
export const describeKeysRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    const body = parseInput(describeKeysBody, req.body, "body");
    res.json({ data: await describeKeys(db, body.organization_id, body.hashes) });
  };

/** `POST /internal/holds`: inference reserves an attempt's worst case before calling a provider. */
export const holdRoute =
  (db: Db, cache: LimitCache): RequestHandler =>
  async (req, res) => {
    res.json({ data: await placeHold(db, cache, parseInput(holdBody, req.body, "body")) });
  };

/** `POST /internal/holds/release` */
export const releaseHoldRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    res.json({ released: await releaseHold(db, parseInput(releaseHoldBody, req.body, "body").generation_id) });
  };
