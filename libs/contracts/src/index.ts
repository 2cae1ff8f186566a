export * from "./common.js";
export * from "./errors.js";
export * from "./api-key.js";
export * from "./workspace.js";
export * from "./route.js";
export * from "./events.js";
