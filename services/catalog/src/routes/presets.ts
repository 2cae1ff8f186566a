import {
  createNamedPresetBody,
  createPresetBody,
  designatePresetBody,
  listPresetsQuery,
  presetSlugParams,
  presetVersionParams,
} from "@switchyard/contracts";
import { callerOf, managementCallerOf, parseInput, type Caller } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { CatalogDeps } from "../deps.js";
import {
  deletePreset,
  designateVersion,
  getPreset,
  getPresetVersion,
  listPresets,
  listPresetVersions,
  savePresetVersion,
  type Scope,
} from "../presets/service.js";

const scopeOf = (caller: Caller): Scope => ({ organizationId: caller.organizationId, workspaceId: caller.workspaceId });

/** `GET /presets/{slug}`: every key of the workspace may read its presets. */
export const getPresetRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const { slug } = parseInput(presetSlugParams, req.params, "path");
    res.json({ data: await getPreset(deps.db, scopeOf(callerOf(res)), slug) });
  };

export const listPresetsRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const query = parseInput(listPresetsQuery, req.query, "query");
    res.json(await listPresets(deps.db, scopeOf(callerOf(res)), query.offset ?? 0, query.limit ?? 100));
  };

/** `POST /presets/{slug}/chat/completions`: a chat request body becomes the preset's next version. */
export const savePresetRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { slug } = parseInput(presetSlugParams, req.params, "path");
    const body = parseInput(createPresetBody, req.body, "body");
    res.json({ data: await savePresetVersion(deps.db, scopeOf(caller), slug, body, caller.keyHash) });
  };

/** `POST /presets`: the same save, with the slug in the body. */
export const createPresetRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { slug, ...body } = parseInput(createNamedPresetBody, req.body, "body");
    res.json({ data: await savePresetVersion(deps.db, scopeOf(caller), slug, body, caller.keyHash) });
  };

export const listPresetVersionsRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const { slug } = parseInput(presetSlugParams, req.params, "path");
    const query = parseInput(listPresetsQuery, req.query, "query");
    res.json(await listPresetVersions(deps.db, scopeOf(callerOf(res)), slug, query.offset ?? 0, query.limit ?? 100));
  };

export const getPresetVersionRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const { slug, version } = parseInput(presetVersionParams, req.params, "path");
    res.json({ data: await getPresetVersion(deps.db, scopeOf(callerOf(res)), slug, version) });
  };


/** `POST /presets/{slug}/designated-version`: choose which version `@preset/<slug>` runs. */
export const designatePresetRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { slug } = parseInput(presetSlugParams, req.params, "path");
    const { version } = parseInput(designatePresetBody, req.body, "body");
    res.json({ data: await designateVersion(deps.db, scopeOf(caller), slug, version) });
  };

export const deletePresetRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const { slug } = parseInput(presetSlugParams, req.params, "path");
    await deletePreset(deps.db, scopeOf(caller), slug);
    res.json({ deleted: true });
  };
