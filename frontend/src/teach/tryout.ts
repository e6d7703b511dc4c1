// Trying a lesson or a puzzle without an account (``/learn/try/...``): the editor works offline
// on a document this browser keeps (localStorage, one per lesson or puzzle) and the server only
// checks it — the issues after each change (``POST /api/v1/validate``), a lesson step's task, a
// puzzle's check by a worker. Once the person signs in, ``keep`` makes the document their own
// graph (``POST /api/v1/<kind>s/<key>/keep``) and the editor moves there.

import "./tryout.css";
import { answerAs, ApiError, json, RestClient } from "../api/client";
import type { Issue, LoomDocument } from "../model/document";
import { button, el } from "../ui/dom";

export interface Tryout {
  kind: "lesson" | "puzzle";
  key: string;
}

/** What the Lesson and Puzzle panels check on a try page: the lesson's or puzzle's key and the
 * document shown (no graph is stored). */
export interface TriedWork {
  key: string;
  document(): LoomDocument | null;
}

/** The lesson or puzzle a page's ``data-try`` names (``lesson:<key>``), or null. */
export function tryoutOf(value: string | undefined): Tryout | null {
  const match = /^(lesson|puzzle):([\w-]+)$/.exec(value ?? "");
  return match ? { kind: match[1] as Tryout["kind"], key: match[2]! } : null;
}

/** Where this browser keeps the work on a lesson or puzzle. */
export function storageKey(t: Tryout): string {
  return `geon-try:${t.kind}:${t.key}`;
}

/** The work kept for ``t``, or null (none, or not a document any more). */
export function storedDocument(t: Tryout, storage: Pick<Storage, "getItem">): LoomDocument | null {
  try {
    const value: unknown = JSON.parse(storage.getItem(storageKey(t)) ?? "null");
    return value !== null &&
      typeof value === "object" &&
      Array.isArray((value as LoomDocument).nodes)
      ? (value as LoomDocument)
      : null;
  } catch {
    return null;
  }
}

/** Where signing in leads back to: this page, asking it to keep the work. */
export function signInUrl(location: { pathname: string }): string {
  return `/accounts/login/?next=${encodeURIComponent(`${location.pathname}?keep=1`)}`;
}

export class TryoutApi extends RestClient {
  issues(document: LoomDocument): Promise<{ issues: Issue[] }> {
    return answerAs<{ issues: Issue[] }>()(
      this.api.POST("/api/v1/validate", { body: { document: json(document) } }),
    );
  }

  keep(t: Tryout, document: LoomDocument): Promise<{ graph: string; kept: boolean; url: string }> {
    const kept = answerAs<{ graph: string; kept: boolean; url: string }>();
    const init = { params: { path: { key: t.key } }, body: { document: json(document) } };
    return kept(
      t.kind === "lesson"
        ? this.api.POST("/api/v1/lessons/{key}/keep", init)
        : this.api.POST("/api/v1/puzzles/{key}/keep", init),
    );
  }
}

export interface TryoutEditor {
  /** The document as shown now (null before it is loaded). */
  document(): LoomDocument | null;
  load(document: LoomDocument): void;
  showIssues(issues: Issue[]): void;
  /** Called after every change of what the editor shows. */
  onChange(listener: () => void): void;
}

/**
 * Start the try page in ``root`` (``data-try``, the starting graph in ``#geon-try-start``):
 * load the kept work or the start, keep every change, show the server's issues, and offer to
 * keep the work as the person's own graph. Returns null on any other page.
 */
export function mountTryout(
  root: HTMLElement,
  editor: TryoutEditor,
  csrf: string,
  storage: Storage = localStorage,
): Tryout | null {
  const t = tryoutOf(root.dataset.try);
  const start = document.getElementById("geon-try-start")?.textContent;
  if (!t || !start) return null;
  const api = new TryoutApi(csrf);
  const note = el("p", { class: "geon-try-note", role: "status" });
  const said = el("span", { class: "geon-try-said" });
  let shown: LoomDocument | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const check = async (doc: LoomDocument): Promise<void> => {
    try {
      const answer = await api.issues(doc);
      if (editor.document() === doc) editor.showIssues(answer.issues);
    } catch (e) {
      said.textContent =
        e instanceof ApiError ? `Could not check the graph: ${e.message}` : String(e);
    }
  };
  const changed = (): void => {
    const doc = editor.document();
    if (!doc || doc === shown) return;
    shown = doc;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      if (kept) return;
      storage.setItem(storageKey(t), JSON.stringify(doc));
      void check(doc);
    }, 250);
  };
  // once kept, nothing is stored here again: a save still pending (the load's own, 250 ms
  // later) would put the work back after keep removed it
  let kept = false;
  const keep = async (): Promise<void> => {
    const doc = editor.document();
    if (!doc) return;
    said.textContent = "Keeping your work…";
    try {
      const answer = await api.keep(t, doc);
      kept = true;
      if (timer !== null) clearTimeout(timer);
      storage.removeItem(storageKey(t));
      location.assign(answer.url);
    } catch (e) {
      said.textContent = e instanceof ApiError ? `Could not keep it: ${e.message}` : String(e);
    }
  };
  const startOver = (): void => {
    storage.removeItem(storageKey(t));
    editor.load(JSON.parse(start) as LoomDocument);
  };

  const signedIn = (root.dataset.user ?? "") !== "";
  const what = t.kind === "lesson" ? "this lesson" : "this puzzle";
  note.append(
    signedIn
      ? el("span", { text: `You are trying ${what} in your browser. ` })
      : el("span", {
          text: `You are trying ${what} without an account: your work is kept in this browser only. `,
        }),
    signedIn
      ? button(
          "Keep as my graph",
          "Make this your own graph, with what you did here",
          () => void keep(),
          "primary geon-try-keep",
        )
      : el("a", {
          class: "geon-try-sign-in",
          href: signInUrl(location),
          text: "Sign in to keep it",
        }),
    " ",
    button(
      "Start over",
      `Throw away what you did and start ${what} again`,
      startOver,
      "geon-try-reset",
    ),
    " ",
    said,
  );
  root.prepend(note);
  editor.onChange(changed);
  editor.load(storedDocument(t, storage) ?? (JSON.parse(start) as LoomDocument));
  if (signedIn && new URLSearchParams(location.search).get("keep") === "1") void keep();
  return t;
}
