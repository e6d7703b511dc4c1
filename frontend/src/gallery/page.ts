// The graph list's own rules (no REST here: that is ../api/, generated from the server's
// OpenAPI document): an import file read and titled, an export's title, the search.

import { ApiError } from "../api/client";
import type { LoomDocument } from "../model/document";

export function emptyDocument(): LoomDocument {
  return { id: crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}`, nodes: [] };
}

/** A title for an imported file: its name without the extension. */
export function importTitle(filename: string): string {
  const base = filename
    .replace(/^.*[\\/]/, "")
    .replace(/\.json$/i, "")
    .trim();
  return base || "Imported graph";
}

/** The top-level tag of an exported document with the graph's title and description. */
export const ABOUT_TAG = "urn:geon:2026-11:tag_types.jsd#/tags/About";

/** The title an exported document carries in its About tag, or null when it has none. */
export function aboutTitle(doc: LoomDocument): string | null {
  const tags = (doc as { tags?: unknown }).tags;
  const about =
    tags && typeof tags === "object" ? (tags as Record<string, unknown>)[ABOUT_TAG] : undefined;
  const title =
    about && typeof about === "object" ? (about as { title?: unknown }).title : undefined;
  return typeof title === "string" && title.trim() ? title : null;
}

/** Parse an import file; refuses anything that is not a LoomGraph document, saying why. */
export function parseImport(filename: string, text: string): LoomDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(
      `"${filename}" is not JSON; expected a LoomGraph document {"id", "nodes": [...]}`,
    );
  }
  const doc = value as Partial<LoomDocument> | null;
  if (
    !doc ||
    typeof doc !== "object" ||
    Array.isArray(doc) ||
    typeof doc.id !== "string" ||
    !Array.isArray(doc.nodes)
  ) {
    throw new ApiError(
      `"${filename}" is not a LoomGraph document; expected an object with "id" (a string) and "nodes" (a list)`,
    );
  }
  return doc as LoomDocument;
}

/** Whether a graph's row matches the search (every word, in its title or description). */
export function matches(query: string, text: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const haystack = text.toLowerCase();
  return words.every((w) => haystack.includes(w));
}
