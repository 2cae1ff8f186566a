import { constants } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import type { SandboxFile } from "./types.js";

/** Regular files under `root`, breadth first, at most `max`; links are not followed. */
export async function listTree(root: string, max: number): Promise<SandboxFile[]> {
  const files: SandboxFile[] = [];
  const folders = [root];
  while (folders.length > 0 && files.length < max) {
    const folder = folders.shift()!;
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      continue; // removed while we looked, or made unreadable by the command
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) folders.push(path);
      else if (entry.isFile()) {
        const stat = await lstat(path).catch(() => undefined);
        if (stat?.isFile()) files.push({ path: relative(root, path).split("\\").join("/"), bytes: stat.size, modifiedAt: stat.mtime });
        if (files.length >= max) break;
      }
    }
  }
  return files;
}

/** A file of a container's tree; a link its commands left there is not followed out of it. */
export async function readInside(root: string, path: string): Promise<Buffer> {
  const handle = await open(join(root, path), constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Bytes a tree takes on disk as `du` counts them (allocated blocks of files, folders and links), so a
 * sparse file counts what it holds. Counting stops once past `stopAbove`.
 */
export async function treeUsage(root: string, stopAbove = Number.POSITIVE_INFINITY): Promise<number> {
  let total = 0;
  const folders = [root];
  while (folders.length > 0 && total <= stopAbove) {
    const folder = folders.pop()!;
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      const stat = await lstat(path).catch(() => undefined);
      if (!stat) continue;
      total += stat.blocks * 512;
      if (stat.isDirectory()) folders.push(path);
    }
  }
  return total;
}
