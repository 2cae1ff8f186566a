export { createApp, type IdentityAppDeps } from "./app.js";
export { identityEnv, loadIdentityConfig, type IdentityConfig } from "./config.js";
export { startIdentity, type IdentityDeps, type RunningIdentity } from "./start.js";
export { createOrganization, type NewOrganization } from "./organizations.js";
export { migrations as identityMigrations, schema as identitySchema } from "./migrations.js";
export { recordCharges } from "./spend/ledger.js";
export { activity, dailyActivity } from "./activity/activity.js";
export { listGenerations } from "./activity/generations.js";
