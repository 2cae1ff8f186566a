import type { IncomingMessage } from "node:http";
import type { RequestHandler, Response } from "express";
import { callerHeader, serviceHeader, type Caller, type CallerVerifier, type ServiceVerifier } from "./internal-auth.js";
import { HttpError, managementOnly } from "./errors.js";

/**
 * Every service route behind the router requires the signed caller header, so a service reached
 * directly, bypassing the router, is not an open door.
 */
export function requireCaller(verify: CallerVerifier): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.caller = await verifiedCaller(req, verify);
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The caller the router signed for this request; a 401 without a valid header. */
export async function verifiedCaller(req: IncomingMessage, verify: CallerVerifier): Promise<Caller> {
  const token = req.headers[callerHeader];
  const caller = typeof token === "string" ? await verify(token) : undefined;
  if (!caller) throw new HttpError("unauthorized", "Missing or invalid internal caller credentials");
  return caller;
}

export function callerOf(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  if (!caller) throw new HttpError("unauthorized", "Missing Authentication header");
  return caller;
}

export function managementCallerOf(res: Response): Caller {
  const caller = callerOf(res);
  if (!caller.management) throw managementOnly();
  return caller;
}

/** `/internal/...` routes answer only other Switchyard services. */
export function requireService(verify: ServiceVerifier): RequestHandler {
  return (req, _res, next) => void verifiedService(req, verify).then(() => next(), next);
}

/** The message of a 401 that refuses the calling service's own token. */
export const serviceCredentialsRefused = "Missing or invalid internal service credentials";
/**
 * Marks a 401 that refuses the calling service's own token, so the caller's internal client tells it from a
 * 401 about its client's key (which it passes on): see `createInternalClient`.
 */
export const refusedServiceHeader = "x-switchyard-refused-service";

/** Checks the signed service header of an `/internal/...` request; a 401 without a valid one. */
export async function verifiedService(req: IncomingMessage, verify: ServiceVerifier): Promise<void> {
  const token = req.headers[serviceHeader];
  const service = typeof token === "string" ? await verify(token) : undefined;
  if (!service) throw new HttpError("unauthorized", serviceCredentialsRefused, undefined, { [refusedServiceHeader]: "true" });
}
