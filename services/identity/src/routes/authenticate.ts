import { authenticateKeyBody } from "@switchyard/contracts";
import { notFound, parseInput, type Queryable } from "@switchyard/runtime";
import type { RequestHandler } from "express";
import { authenticateKey } from "../keys/service.js";

/** `POST /internal/keys/authenticate`: the router sends the hash of a presented secret, never the secret. */
export const authenticateRoute =
  (db: Queryable): RequestHandler =>
  async (req, res) => {
    const { hash } = parseInput(authenticateKeyBody, req.body, "body");
    const key = await authenticateKey(db, hash);
    if (!key) throw notFound("API key not found");
    res.json({ data: key });
  };
