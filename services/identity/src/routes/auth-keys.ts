import { createAuthCodeBody, exchangeAuthCodeBody, type AuthCode, type ExchangeAuthCodeResponse } from "@switchyard/contracts";
import { managementCallerOf, parseInput } from "@switchyard/runtime";
import { appOf } from "@switchyard/upstream";
import type { RequestHandler } from "express";
import type { KeyDeps } from "../keys/service.js";
import { createAuthCode, exchangeAuthCode } from "../pkce/codes.js";

/** `POST /auth/keys/code`: management keys only; the code in `data.id` is shown once. */
export const createAuthCodeRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const caller = managementCallerOf(res);
    const body = parseInput(createAuthCodeBody, req.body, "body");
    const { appTitle } = appOf(req.headers);
    res.json({ data: await createAuthCode(deps.db, caller, body, appTitle) } satisfies { data: AuthCode });
  };

/** `POST /auth/keys`: public; the code and its verifier are the credentials. */
export const exchangeAuthCodeRoute =
  (deps: KeyDeps): RequestHandler =>
  async (req, res) => {
    const body = parseInput(exchangeAuthCodeBody, req.body, "body");
    res.json((await exchangeAuthCode(deps, body)) satisfies ExchangeAuthCodeResponse);
  };
