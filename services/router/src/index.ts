export { createRouterApp, type RouterDeps } from "./app.js";
export { routerEnv, loadRouterConfig, type RouterConfig } from "./config.js";
export { startRouter, type RouterStartDeps, type RunningRouter } from "./start.js";
export { httpIdentityClient, type IdentityClient } from "./auth/identity-client.js";
export type { Target } from "./forward/targets.js";
export type { ServiceName } from "./routes.js";
