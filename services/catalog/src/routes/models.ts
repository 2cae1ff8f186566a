import {
  countModelsQuery,
  listEmbeddingsModelsQuery,
  listModelsQuery,
  listUserModelsQuery,
  modelEndpointsParams,
  type Model,
  type OutputModalityFilter,
} from "@switchyard/contracts";
import { callerOf, notFound, parseInput } from "@switchyard/runtime";
import { endpointStatsKey } from "@switchyard/upstream";
import type { Request, RequestHandler } from "express";
import type { CatalogDeps } from "../deps.js";
import { callable, toEndpointRecord, toModelRecord, toProviderRecord } from "../models/records.js";
import type { ModelEntry } from "../models/snapshot.js";
import { accessPolicyFor } from "../policy/resolve.js";
import { allowedEndpoints } from "../policy/access.js";

const outputs = (m: ModelEntry, filter: OutputModalityFilter) =>
  filter === "all" || m.output_modalities.some((o) => (filter as string[]).includes(o));

/** Offset pagination; with neither offset nor limit the whole list, as the spec says. */
function page(req: Request, all: Model[], offset: number | undefined, limit: number | undefined) {
  if (offset === undefined && limit === undefined) return { data: all, total_count: all.length, links: { next: null } };
  const start = offset ?? 0;
  const size = limit ?? 100;
  const data = all.slice(start, start + size);
  let next: string | null = null;
  if (start + size < all.length) {
    const url = new URL(req.originalUrl, "http://gateway");
    url.searchParams.set("offset", String(start + size));
    url.searchParams.set("limit", String(size));
    next = `${url.pathname}${url.search}`;
  }
  return { data, total_count: all.length, links: { next } };
}

/** `GET /models`: everything the catalog holds. */
export const listModelsRoute =
  (deps: CatalogDeps): RequestHandler =>
  (req, res) => {
    callerOf(res);
    const query = parseInput(listModelsQuery, req.query, "query");
    const models = deps.catalog
      .current()
      .models.filter((m) => outputs(m, query.output_modalities))
      .filter((m) => !query.input_modalities?.length || query.input_modalities.every((i) => (m.input_modalities as string[]).includes(i)))
      .filter((m) => {
        const wanted = query.supported_parameters;
        if (!wanted?.length) return true;
        return callable(m).some((e) => wanted.every((p) => e.supported_parameters.includes(p)));
      })
      .map((m) => toModelRecord(m));
    res.json(page(req, models, query.offset, query.limit));
  };

/** `GET /models/count`: as many as `GET /models` lists for the same output modalities. */
export const countModelsRoute =
  (deps: CatalogDeps): RequestHandler =>
  (req, res) => {
    callerOf(res);
    const query = parseInput(countModelsQuery, req.query, "query");
    const count = deps.catalog.current().models.filter((m) => outputs(m, query.output_modalities)).length;
    res.json({ data: { count } });
  };

/** `GET /model/{author}/{slug}`: one model's record; a provider's own name for it finds it too, as OpenRouter resolves aliases. */
export const getModelRoute =
  (deps: CatalogDeps): RequestHandler =>
  (req, res) => {
    callerOf(res);
    const { author, slug } = parseInput(modelEndpointsParams, req.params, "path");
    const catalog = deps.catalog.current();
    const model = catalog.modelsById.get(`${author}/${slug}`) ?? catalog.modelsByUpstream.get(`${author}/${slug}`);
    if (!model) throw notFound(`Model ${author}/${slug} not found`);
    res.json({ data: toModelRecord(model) });
  };

/** `GET /embeddings/models`: the catalog's embedding models. */
export const listEmbeddingsModelsRoute =
  (deps: CatalogDeps): RequestHandler =>
  (req, res) => {
    callerOf(res);
    const query = parseInput(listEmbeddingsModelsQuery, req.query, "query");
    const models = deps.catalog
      .current()
      .models.filter((m) => outputs(m, ["embeddings"]))
      .map((m) => toModelRecord(m));
    res.json(page(req, models, query.offset, query.limit));
  };

/** `GET /models/user`: only what this key may use, given its workspace, guardrails and hostname. */
export const listUserModelsRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    const caller = callerOf(res);
    const query = parseInput(listUserModelsQuery, req.query, "query");
    const policy = await accessPolicyFor(deps, caller, req);
    const models: Model[] = [];
    for (const m of deps.catalog.current().models) {
      if (!outputs(m, query.output_modalities)) continue;
      const endpoints = allowedEndpoints(m.endpointEntries, policy);
      if (endpoints.length) models.push(toModelRecord(m, endpoints));
    }
    res.json(page(req, models, query.offset, query.limit));
  };

/** `GET /models/{author}/{slug}/endpoints`: the endpoints that can be called now. */
export const modelEndpointsRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (req, res) => {
    callerOf(res);
    const { author, slug } = parseInput(modelEndpointsParams, req.params, "path");
    const model = deps.catalog.current().modelsById.get(`${author}/${slug}`);
    if (!model) throw notFound(`Model ${author}/${slug} not found`);
    const record = toModelRecord(model);
    const stats = await deps.endpointStats();
    res.json({
      data: {
        id: model.id,
        name: model.name,
        created: model.createdAt,
        description: model.description,
        architecture: record.architecture,
        endpoints: model.endpointEntries.filter((e) => e.providerEntry.usable).map((e) => toEndpointRecord(e, stats.get(endpointStatsKey(e.providerEntry.slug, e.model.id)))),
      },
    });
  };

/** `GET /endpoints/zdr`: what a request that demands zero data retention can reach, across all models. */
export const listZdrEndpointsRoute =
  (deps: CatalogDeps): RequestHandler =>
  async (_req, res) => {
    callerOf(res);
    const endpoints = deps.catalog.current().models.flatMap((m) => m.endpointEntries.filter((e) => e.zdr && e.providerEntry.usable));
    const stats = await deps.endpointStats();
    res.json({ data: endpoints.map((e) => toEndpointRecord(e, stats.get(endpointStatsKey(e.providerEntry.slug, e.model.id)))) });
  };

export const listProvidersRoute =
  (deps: CatalogDeps): RequestHandler =>
  (_req, res) => {
    callerOf(res);
    res.json({ data: deps.catalog.current().providers.map(toProviderRecord) });
  };
