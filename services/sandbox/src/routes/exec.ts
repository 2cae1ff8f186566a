import type { RequestHandler } from "express";
import type { SandboxDeps } from "../deps.js";
import { execute } from "../exec.js";

/**
 * `POST /internal/sandbox/exec`, for inference in another process. When the caller closes the connection
 * before the answer (its client left, or its deadline passed), the running command is killed.
 */
export const execRoute =
  (deps: SandboxDeps): RequestHandler =>
  async (req, res) => {
    const abandoned = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abandoned.abort(new Error("the caller closed the connection"));
    });
    try {
      const answer = await execute(deps, req.body, abandoned.signal);
      if (!res.destroyed) res.json(answer);
    } catch (error) {
      if (!abandoned.signal.aborted) throw error;
      deps.logger.info({ reason: (abandoned.signal.reason as Error).message }, "sandbox call abandoned by its caller; its command was killed");
    }
  };
