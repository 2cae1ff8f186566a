import { stopWithParent } from "./cleanup.js";
import { startFakeUpstream } from "./fake-upstream.js";

/** The fake upstream in a process of its own, as a real provider is: no target shares its event loop. */
const upstream = await startFakeUpstream();
stopWithParent(() => {
  upstream.close();
  process.exit(0);
});
process.send?.({ ready: true, url: upstream.url });
