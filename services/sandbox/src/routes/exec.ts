import type { RequestHandler } from "express";
import type { SandboxDeps } from "../deps.js";
import { execute } from "../exec.js";

/** `POST /internal/sandbox/exec`, for inference in another process. */
export const execRoute =
  (deps: SandboxDeps): RequestHandler =>
  async (req, res) => {
    res.json(await execute(deps, req.body));
  };
