import { modelEndpointsParams, type ImageModelListItem } from "@switchyard/contracts";
import { callerOf, notFound, parseInput } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import type { CatalogDeps } from "../deps.js";
import { imageEndpointsOf, toImageEndpointRecord, toImageModelRecord } from "../models/image-records.js";

/** `GET /images/models`: every model `POST /images` can generate with, whether or not its provider has a key yet, as `/models` lists. */
export const listImageModelsRoute =
  (deps: CatalogDeps): RequestHandler =>
  (_req, res) => {
    callerOf(res);
    const data: ImageModelListItem[] = [];
    for (const model of deps.catalog.current().models) {
      const endpoints = imageEndpointsOf(model);
      if (endpoints.length) data.push(toImageModelRecord(model, endpoints));
    }
    res.json({ data });
  };

/** `GET /images/models/{author}/{slug}/endpoints`: the endpoints that can generate now, as `/models/{author}/{slug}/endpoints`. */
export const imageModelEndpointsRoute =
  (deps: CatalogDeps): RequestHandler =>
  (req, res) => {
    callerOf(res);
    const { author, slug } = parseInput(modelEndpointsParams, req.params, "path");
    const model = deps.catalog.current().modelsById.get(`${author}/${slug}`);
    const endpoints = model ? imageEndpointsOf(model) : [];
    if (!model || !endpoints.length) throw notFound(`Image model ${author}/${slug} not found`);
    res.json({ id: model.id, endpoints: endpoints.filter((e) => e.providerEntry.usable).map(toImageEndpointRecord) });
  };
