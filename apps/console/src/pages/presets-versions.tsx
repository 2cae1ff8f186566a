import { useState } from "preact/hooks";
import type { Call } from "../api.js";
import { Dialog, ErrorNote, Loading } from "../components/ui.js";
import { dateTime } from "../format.js";
import { useLoad } from "../use-load.js";
import { messageOf } from "./keys-api.js";
import { loadVersions, presetPath } from "./presets-api.js";

/** Every version of a preset, newest first; each of them can become the version `@preset/<slug>` runs. */
export function PresetVersionsDialog({ call, slug, onChanged, onClose }: { call: Call; slug: string; onChanged: () => void; onClose: () => void }) {
  const loaded = useLoad((signal) => loadVersions(call, slug, signal), [call, slug]);
  const [busy, setBusy] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const designate = async (version: number) => {
    setBusy(version);
    setError(null);
    setDone(null);
    try {
      await call(`${presetPath(slug)}/designated-version`, { method: "POST", body: { version } });
      setDone(`Version ${version} is now the designated version.`);
      loaded.reload();
      onChanged();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(null);
    }
  };

  return (
    <Dialog title={`Versions of ${slug}`} onClose={onClose} side>
      {loaded.loading && !loaded.data && <Loading />}
      <ErrorNote error={loaded.error && `Versions could not be loaded: ${loaded.error.message}`} />
      <ErrorNote error={error} />
      {done && (
        <p class="notice" role="status">
          {done}
        </p>
      )}
      {loaded.data?.versions.map((v) => {
        const designated = v.id === loaded.data?.designatedId;
        const headingId = `preset-version-${v.version}`;
        return (
          <article class="preset-version" key={v.id}>
            <div class="version-head">
              <h3 id={headingId}>Version {v.version}</h3>
              {designated ? (
                <span class="badge ok">Designated</span>
              ) : (
                <button type="button" class="quiet" aria-describedby={headingId} disabled={busy !== null} onClick={() => designate(v.version)}>
                  Make designated
                </button>
              )}
            </div>
            <dl class="facts">
              <dt>Model</dt>
              <dd>{typeof v.config.model === "string" ? v.config.model : "— (the request's own)"}</dd>
              <dt>Saved</dt>
              <dd>{dateTime(v.created_at)}</dd>
            </dl>
            {v.system_prompt && (
              <>
                <h4>System prompt</h4>
                <pre>{v.system_prompt}</pre>
              </>
            )}
            <h4>Body</h4>
            <pre>{JSON.stringify(v.config, null, 2)}</pre>
          </article>
        );
      })}
    </Dialog>
  );
}
