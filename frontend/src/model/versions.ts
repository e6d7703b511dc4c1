// The versions of a graph as the history panel lists them (issue 21, "No history"): newest
// first, each with its summary by name; runs of versions that only moved nodes fold into one
// row that opens on demand.

export interface VersionInfo {
  number: number;
  author: string | null;
  message: string;
  created: string;
  summary?: string;
  layoutOnly?: boolean;
}

export type HistoryRow =
  { kind: "version"; version: VersionInfo } | { kind: "moves"; versions: VersionInfo[] };

/** The rows of the history: one per version, with consecutive layout-only versions folded
 * (a single one stays a row of its own; the current version is never folded away).
 * ``versions`` come newest first. */
export function historyRows(versions: VersionInfo[]): HistoryRow[] {
  const rows: HistoryRow[] = [];
  let moves: VersionInfo[] = [];
  const flush = () => {
    if (moves.length === 1) rows.push({ kind: "version", version: moves[0]! });
    else if (moves.length > 1) rows.push({ kind: "moves", versions: moves });
    moves = [];
  };
  for (const [i, v] of versions.entries()) {
    if (v.layoutOnly && i > 0) {
      moves.push(v);
      continue;
    }
    flush();
    rows.push({ kind: "version", version: v });
  }
  flush();
  return rows;
}

/** What a version did, for its row: its summary, else its message, else a plain fallback. */
export function versionText(v: VersionInfo): string {
  const said = [v.summary, v.message].filter((s): s is string => !!s && s.trim() !== "");
  if (said.length === 2 && said[0] !== said[1]) return `${said[1]} — ${said[0]}`;
  return said[0] ?? (v.number === 1 ? "created" : "changed the document");
}

/** A time as people say it relative to ``now``: "just now", "5 min ago", "3 h ago", else the date. */
export function ago(iso: string, now: Date = new Date()): string {
  const then = new Date(iso);
  const seconds = Math.round((now.getTime() - then.getTime()) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 45) return "just now";
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return then.toISOString().slice(0, 10);
}

/** The label of a folded run of moves: "versions 12–15: moved nodes (4)". */
export function movesLabel(versions: VersionInfo[]): string {
  const numbers = versions.map((v) => v.number);
  return `versions ${Math.min(...numbers)}–${Math.max(...numbers)}: layout moves (${versions.length})`;
}
