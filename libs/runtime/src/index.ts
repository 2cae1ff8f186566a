export * from "./db/index.js";
export * from "./log.js";
export * from "./bus/index.js";
export * from "./config.js";
export * from "./http/index.js";
export * from "./backends.js";
export * from "./api-key-format.js";
export * from "./money.js";
