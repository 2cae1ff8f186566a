export { startMedia, type RunningMedia, type MediaStartDeps } from "./start.js";
export { findGeneration as findMediaGeneration } from "./generations.js";
export { mediaEnv, loadMediaConfig, type MediaConfig } from "./config.js";
