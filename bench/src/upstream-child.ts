import { startFakeUpstream } from "./fake-upstream.js";

/** The fake upstream in a process of its own, as a real provider is: no target shares its event loop. */
const upstream = await startFakeUpstream();
const stop = () => {
  upstream.close();
  process.exit(0);
};
process.on("message", (message: unknown) => {
  if (message === "stop") stop();
});
// A parent that is gone (killed, crashed) takes the upstream with it.
process.on("disconnect", stop);
process.send?.({ ready: true, url: upstream.url });
