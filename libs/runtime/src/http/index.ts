export * from "./app.js";
export * from "./errors.js";
export * from "./internal-auth.js";
export * from "./caller.js";
export * from "./health.js";
export * from "./serve.js";
export * from "./internal-client.js";
export * from "./multipart.js";
