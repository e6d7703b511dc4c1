// The editor's state and the pure functions that fold server messages into it.

import type { AppliedMessage, Presence, PresenceMessage, RejectedMessage } from "../sync/session";
import type { Issue, LoomDocument } from "./document";

export type RunStatus = "queued" | "running" | "done" | "failed";

export interface RunInfo {
  id: number;
  status: RunStatus;
  progress: number;
  error: string;
  result: Record<string, unknown>;
  workerPid: number | null;
}

export interface EditorState {
  connection: "connecting" | "open" | "closed";
  document: LoomDocument | null;
  version: number | null;
  issues: Issue[];
  present: Presence[];
  /** The latest run requested from this page, and every status it was seen in, in order. */
  run: RunInfo | null;
  runStatuses: RunStatus[];
  message: string;
}

export interface SnapshotMessage {
  type: "snapshot";
  document: LoomDocument;
  version: number;
  issues: Issue[];
  present: Presence[];
}

export interface RunMessage {
  type: "run";
  event: "queued" | "progress" | "done" | "failed";
  run: RunInfo;
}

export interface ErrorMessage {
  type: "error";
  error: { code: string; message: string };
  /** The edit the error is about, when the frame was an edit. */
  id?: string;
}

export interface PongMessage {
  type: "pong";
  id: string | null;
}

/** The graph's shard plans changed (saved, renamed, generated or deleted by ``author``). */
export interface PlansMessage {
  type: "plans";
  author: string;
}

export type ServerMessage = SnapshotMessage | RunMessage | ErrorMessage | AppliedMessage | RejectedMessage | PresenceMessage | PongMessage | PlansMessage;

const TYPES = new Set(["snapshot", "run", "error", "applied", "rejected", "presence", "pong", "plans"]);

export function initialState(): EditorState {
  return { connection: "connecting", document: null, version: null, issues: [], present: [], run: null, runStatuses: [], message: "" };
}

export function applySnapshot(state: EditorState, msg: SnapshotMessage): EditorState {
  return { ...state, document: msg.document, version: msg.version, issues: msg.issues, present: msg.present };
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

/** Parse one websocket frame; anything not a known message is reported, not thrown. */
export function parseMessage(data: string): ServerMessage | { type: "invalid"; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return { type: "invalid", reason: "not JSON" };
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type === "string" && TYPES.has(type)) return value as ServerMessage;
  return { type: "invalid", reason: `unknown message type "${String(type)}"` };
}
