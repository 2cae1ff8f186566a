import {
  createFederationPolicyBody,
  federationPolicyIdParams,
  listFederationPoliciesQuery,
  updateFederationPolicyBody,
} from "@switchyard/contracts";
import { managementCallerOf, parseInput, updateBody, type Queryable } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { createPolicy, deletePolicy, getPolicy, listPolicies, updatePolicy } from "../federation/policies.js";

export interface FederationRouteDeps {
  db: Queryable;
  /** Development and tests only: plain-http issuers. */
  allowInsecureIssuers: boolean;
}

export const listPoliciesRoute =
  (deps: FederationRouteDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const query = parseInput(listFederationPoliciesQuery, req.query, "query");
    res.json(await listPolicies(deps.db, caller.organizationId, query.offset ?? 0, query.limit ?? 50));
  };

export const createPolicyRoute =
  (deps: FederationRouteDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const body = parseInput(createFederationPolicyBody, req.body, "body");
    res.status(201).json({ data: await createPolicy(deps.db, caller.organizationId, body, deps.allowInsecureIssuers) });
  };

export const getPolicyRoute =
  (deps: FederationRouteDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(federationPolicyIdParams, req.params, "path");
    res.json({ data: await getPolicy(deps.db, caller.organizationId, id) });
  };

export const updatePolicyRoute =
  (deps: FederationRouteDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(federationPolicyIdParams, req.params, "path");
    const body = parseInput(updateFederationPolicyBody, updateBody(req), "body");
    res.json({ data: await updatePolicy(deps.db, caller.organizationId, id, body) });
  };

export const deletePolicyRoute =
  (deps: FederationRouteDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { id } = parseInput(federationPolicyIdParams, req.params, "path");
    await deletePolicy(deps.db, caller.organizationId, id);
    res.json({ deleted: true });
  };
