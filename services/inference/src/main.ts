import { exitOnConfigError } from "@switchyard/runtime";
import { runProviderService } from "@switchyard/upstream";
import { loadInferenceConfig } from "./config.js";
import { remoteContent, remoteMediaGenerations } from "./generations/remote-content.js";
import { startInference } from "./start.js";
import { remoteSandbox } from "./tools/remote-sandbox.js";

/** The inference service as its own process. */
exitOnConfigError();
const config = loadInferenceConfig();
// A shell tool call may run up to 20 commands, each up to the sandbox's time limit.
const sandboxTimeoutMs = 30 * 60_000;
await runProviderService("inference", config, (deps) =>
  startInference({
    ...deps,
    config,
    content: remoteContent(deps.serviceClient(config.STORAGE_URL)),
    mediaGenerations: remoteMediaGenerations(deps.serviceClient(config.MEDIA_URL)),
    sandbox: config.SANDBOX_URL ? remoteSandbox(deps.serviceClient(config.SANDBOX_URL, sandboxTimeoutMs, { idempotent: false })) : undefined,
  }),
);
