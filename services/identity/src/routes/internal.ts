import { describeKeysBody, workspacePolicyBody } from "@switchyard/contracts";
import { notFound, parseInput, type Queryable } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { describeKeys, workspacePolicy } from "../internal.js";

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
