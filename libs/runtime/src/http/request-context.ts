import { AsyncLocalStorage } from "node:async_hooks";

export const requestIdHeader = "x-request-id";

/** The id of the request being handled, for calls to other services made on its behalf. */
const currentRequest = new AsyncLocalStorage<string>();

export const currentRequestId = (): string | undefined => currentRequest.getStore();

export const withRequestId = (id: string, fn: () => void): void => currentRequest.run(id, fn);
