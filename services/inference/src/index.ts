export { createApp } from "./app.js";
export { inferenceEnv, loadInferenceConfig, type InferenceConfig } from "./config.js";
export { startInference, type InferenceStartDeps, type RunningInference } from "./start.js";
