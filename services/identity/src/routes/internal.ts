import { describeKeysBody, guardrailBudgetsBody, holdBody, policyActiveBody, releaseHoldBody, holdOwnerBody, renewHoldsBody, workspacePolicyBody } from "@switchyard/contracts";
import { notFound, parseInput, type Db, type Queryable } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { describeKeys, workspacePolicy } from "../internal.js";
import { policyActive } from "../federation/policies.js";
import { writeBudgets } from "../spend/budgets.js";
import { placeHold, releaseHold } from "../spend/holds.js";
import { detachOwnerHolds, releaseOwnerHolds, renewHolds } from "../spend/leases.js";

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
  (db: Db): RequestHandler =>
  async (req, res) => {
    res.json(await holdAnswer(db, req.body));
  };

/** What `POST /internal/holds` answers to a body: also served without express (see the identity app). */
export const holdAnswer = async (db: Db, body: unknown) => ({ data: await placeHold(db, parseInput(holdBody, body, "body")) });

/** `POST /internal/holds/release` */
export const releaseHoldRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    res.json({ released: await releaseHold(db, parseInput(releaseHoldBody, req.body, "body").generation_id) });
  };

/** `POST /internal/holds/renew`: a replica's heartbeat for the leases of its holds. */
export const renewHoldsRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    const body = parseInput(renewHoldsBody, req.body, "body");
    res.json({ holds: await renewHolds(db, body.owner, body.lease_ms) });
  };

/** `POST /internal/holds/release-owner` */
export const releaseOwnerRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    res.json({ holds: await releaseOwnerHolds(db, parseInput(holdOwnerBody, req.body, "body").owner) });
  };

/** `POST /internal/holds/detach` */
export const detachOwnerRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    res.json({ holds: await detachOwnerHolds(db, parseInput(holdOwnerBody, req.body, "body").owner) });
  };

/** `POST /internal/guardrail-budgets`: catalog writes the budgets of the guardrails it just changed. */
export const guardrailBudgetsRoute =
  (db: Db): RequestHandler =>
  async (req, res) => {
    const { budgets } = parseInput(guardrailBudgetsBody, req.body, "body");
    await writeBudgets(db, budgets);
    res.json({ written: budgets.length });
  };

/** `POST /internal/federation-policies/active`: the router checks the policy an access token names. */
export const policyActiveRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    res.json({ active: await policyActive(db, parseInput(policyActiveBody, req.body, "body").id) });
  };
