// The editor's state (what the user sees of the connection, the document and the latest run) and
// the pure functions that fold server messages into it. The messages' types are generated
// (sync/protocol.ts).

import type { Issue, LoomDocument } from "./document";
import type { IssueCounts, Presence, RunInfo, RunMessage } from "../sync/protocol";

export type RunStatus = RunInfo["status"];

/** The websocket as the user sees it. */
export interface LinkState {
  /** Connections started since the page loaded (the first included). */
  attempts: number;
  /** When the next try starts (``Date.now()`` ms) while waiting to reconnect, else null. */
  retryAt: number | null;
  /** Whether the line was open once and dropped (then "connecting" means reconnecting). */
  lost: boolean;
  /** Why the editor stopped reconnecting (signed out, no access), with the close code; null while it keeps trying. */
  refused: { code: number; message: string } | null;
}

/** Roles that may look but not edit. */
export const READ_ONLY_ROLES: ReadonlySet<string> = new Set(["viewer", "reviewer"]);

export interface EditorState {
  connection: "connecting" | "open" | "closed";
  link: LinkState;
  /** This user's role on the graph as the server last said (``access``); null until it says. */
  role: string | null;
  /** This client's edits the server has not confirmed (kept across a reconnect). */
  unsaved: number;
  document: LoomDocument | null;
  version: number | null;
  /** The issues shown (the server may send only the first ones, see ``issueCounts``). */
  issues: Issue[];
  /** How many issues the document has, by severity (the list above may be shorter). */
  issueCounts: IssueCounts;
  present: Presence[];
  /** The latest run requested from this page, and every status it was seen in, in order. */
  run: RunInfo | null;
  runStatuses: RunStatus[];
  message: string;
}

export function initialState(): EditorState {
  return {
    connection: "connecting",
    link: { attempts: 0, retryAt: null, lost: false, refused: null },
    role: null,
    unsaved: 0,
    document: null,
    version: null,
    issues: [],
    issueCounts: { error: 0, warning: 0 },
    present: [],
    run: null,
    runStatuses: [],
    message: "",
  };
}

/**
 * The document's issue counts: the server's full counts when it sent them (its list may be cut
 * short), plus the issues in ``extra`` (the editor's own predictions); else the list's.
 */
export function countIssues(
  issues: readonly Issue[],
  server: IssueCounts | null,
  extra: readonly Issue[] = [],
): IssueCounts {
  const count = (list: readonly Issue[], severity: string) =>
    list.filter((i) => i.severity === severity).length;
  const base = server ?? { error: count(issues, "error"), warning: count(issues, "warning") };
  return {
    error: base.error + count(extra, "error"),
    warning: base.warning + count(extra, "warning"),
  };
}

/** Follow the newest run: a newer run replaces the one shown; an older run's events are ignored. */
export function applyRun(state: EditorState, msg: RunMessage): EditorState {
  const current = state.run;
  if (current && msg.run.id < current.id) return state;
  const statuses = current && current.id === msg.run.id ? state.runStatuses : [];
  const last = statuses[statuses.length - 1];
  const runStatuses = last === msg.run.status ? statuses : [...statuses, msg.run.status];
  return { ...state, run: msg.run, runStatuses };
}
