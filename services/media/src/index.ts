export { startMedia, type RunningMedia, type MediaStartDeps } from "./start.js";
export { mediaEnv, loadMediaConfig, type MediaConfig } from "./config.js";
