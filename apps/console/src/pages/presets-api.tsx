import type { Call } from "../api.js";
import { pages } from "./keys-api.js";

/** libs/contracts/src/presets.ts as the console reads it. */
export interface PresetVersion {
  id: string;
  version: number;
  system_prompt: string;
  config: Record<string, unknown> & { model?: string; temperature?: number };
  created_at: string;
}

export interface Preset {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  designated_version_id: string;
  updated_at: string;
}

export interface PresetWithVersion extends Preset {
  designated_version: PresetVersion;
}

/** A preset with its designated version, or why that version could not be read. */
export interface PresetRow {
  preset: Preset;
  designated: PresetVersion | null;
  problem: string | null;
}

export const presetPath = (slug: string) => `/presets/${encodeURIComponent(slug)}`;

/** The list carries only the designated version's id, so each preset's own record fills in its number and model. */
export async function loadPresets(call: Call, signal: AbortSignal): Promise<PresetRow[]> {
  const list = await pages<Preset>(call, "/presets", 100, signal);
  return Promise.all(
    list.data.map(async (preset) => {
      try {
        const full = await call<{ data: PresetWithVersion }>(presetPath(preset.slug), { signal });
        return { preset, designated: full.data.designated_version, problem: null };
      } catch (e) {
        if (signal.aborted) throw e;
        return { preset, designated: null, problem: e instanceof Error ? e.message : String(e) };
      }
    }),
  );
}

export async function loadVersions(call: Call, slug: string, signal: AbortSignal) {
  const [preset, versions] = await Promise.all([
    call<{ data: PresetWithVersion }>(presetPath(slug), { signal }),
    pages<PresetVersion>(call, `${presetPath(slug)}/versions`, 100, signal),
  ]);
  return { designatedId: preset.data.designated_version_id, versions: [...versions.data].sort((a, b) => b.version - a.version) };
}
