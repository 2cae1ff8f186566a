import { updateCreditsBody } from "@switchyard/contracts";
import { callerOf, managementCallerOf, parseInput, type Db } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { credits, setCreditLimit } from "../spend/credits.js";

/** `GET /credits`: any key reads its organization's credits, as tools that show a balance ask with the key they have. */
export const creditsRoute =
  (db: Db): RequestHandler =>
  async (_req, res) => {
    res.json({ data: await credits(db, callerOf(res).organizationId) });
  };

/** `PUT /credits`: the operator sets or removes the organization-wide credit limit. */
export const updateCreditsRoute =
  (db: Db): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const body = parseInput(updateCreditsBody, req.body, "body");
    await setCreditLimit(db, caller.organizationId, body.total_credits);
    res.json({ data: await credits(db, caller.organizationId) });
  };
