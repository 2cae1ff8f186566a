import { sandboxExecResponse } from "@switchyard/contracts";
import type { InternalClient } from "@switchyard/runtime";
import type { Sandbox } from "./run.js";

/** The sandbox service over HTTP, for inference as its own process. */
export const remoteSandbox = (client: InternalClient): Sandbox => ({
  async execute(request, signal) {
    const answer = await client.post("/internal/sandbox/exec", request, sandboxExecResponse, signal);
    if (!answer) throw new Error("the sandbox service has no /internal/sandbox/exec route");
    return answer;
  },
});
