import { activityQuery, dailyActivityQuery, listGenerationsQuery } from "@switchyard/contracts";
import { managementCallerOf, parseInput, type Queryable } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { activity, dailyActivity } from "../activity/activity.js";
import { listGenerations } from "../activity/generations.js";

/** `GET /activity`: the organization's last 30 completed UTC days per model and endpoint, as OpenRouter answers it. */
export const activityRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(activityQuery, req.query, "query");
    res.json({ data: await activity(db, caller.organizationId, query) });
  };

/** `GET /activity/daily`: per day over a range, whole or split, for dashboards. */
export const dailyActivityRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(dailyActivityQuery, req.query, "query");
    res.json({ data: await dailyActivity(db, caller.organizationId, query) });
  };

/** `GET /generations`: a page of the organization's generations, newest first. */
export const listGenerationsRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(listGenerationsQuery, req.query, "query");
    res.json(await listGenerations(db, caller.organizationId, query));
  };
