export { createApp, type IdentityAppDeps } from "./app.js";
export { identityEnv, loadIdentityConfig, type IdentityConfig } from "./config.js";
export { startIdentity, type IdentityDeps, type RunningIdentity } from "./start.js";
export { createOrganization, type NewOrganization } from "./organizations.js";
