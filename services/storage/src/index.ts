export { startStorage, type RunningStorage, type StorageStartDeps } from "./start.js";
export { storageEnv, loadStorageConfig, type StorageConfig } from "./config.js";
