import { useEffect, useMemo, useState } from "preact/hooks";
import { caller, type Call } from "./api.js";
import { ActivityPage } from "./pages/activity.js";
import { GuardrailsPage } from "./pages/guardrails.js";
import { KeysPage } from "./pages/keys.js";
import { ModelsPage } from "./pages/models.js";
import { OverviewPage } from "./pages/overview.js";
import { PlaygroundPage } from "./pages/playground.js";
import { SignIn } from "./pages/sign-in.js";
import { session } from "./session.js";

export interface PageProps {
  /** Calls the API with the signed-in management key. */
  call: Call;
}

const pages = [
  { path: "overview", title: "Overview", Page: OverviewPage },
  { path: "keys", title: "Keys", Page: KeysPage },
  { path: "activity", title: "Activity", Page: ActivityPage },
  { path: "models", title: "Models and providers", Page: ModelsPage },
  { path: "guardrails", title: "Guardrails and presets", Page: GuardrailsPage },
  { path: "playground", title: "Playground", Page: PlaygroundPage },
] as const;

/** Pages are addressed by the URL's fragment (`#/keys`), which never carries anything secret. */
function currentPath(): string {
  const path = location.hash.replace(/^#\/?/, "");
  return pages.some((p) => p.path === path) ? path : "overview";
}

export function App() {
  const [key, setKey] = useState<string | null>(session.key());
  const [expired, setExpired] = useState(false);
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const onHash = () => setPath(currentPath());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  const call = useMemo(
    () =>
      key
        ? caller(key, () => {
            session.forget();
            setExpired(true);
            setKey(null);
          })
        : null,
    [key],
  );
  const page = pages.find((p) => p.path === path) ?? pages[0];
  useEffect(() => {
    document.title = key ? `${page.title} · Switchyard` : "Sign in · Switchyard";
  }, [key, page]);

  if (!call) {
    return (
      <SignIn
        notice={expired ? "The management key stopped working (it was disabled, deleted or expired). Sign in with another." : undefined}
        onSignedIn={(k) => {
          session.keep(k);
          setExpired(false);
          setKey(k);
        }}
      />
    );
  }
  const Page = page.Page;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <nav class="sidebar" aria-label="Console">
        <div class="brand">Switchyard</div>
        <ul>
          {pages.map((p) => (
            <li key={p.path}>
              <a href={`#/${p.path}`} aria-current={p.path === page.path ? "page" : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
        <button
          type="button"
          class="quiet sign-out"
          onClick={() => {
            session.forget();
            setKey(null);
          }}
        >
          Sign out
        </button>
      </nav>
      <main id="main" tabIndex={-1}>
        <h1>{page.title}</h1>
        <Page key={page.path} call={call} />
      </main>
    </div>
  );
}
