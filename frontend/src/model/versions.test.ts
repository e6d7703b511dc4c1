import { describe, expect, it } from "vitest";
import { ago, historyRows, movesLabel, versionText, type VersionInfo } from "./versions";

const v = (number: number, extra: Partial<VersionInfo> = {}): VersionInfo => ({
  number,
  author: "ann",
  message: "",
  created: "2026-11-24T10:00:00Z",
  ...extra,
});

describe("historyRows", () => {
  it("folds runs of layout-only versions and keeps a single move as its own row", () => {
    const rows = historyRows([
      v(6),
      v(5, { layoutOnly: true }),
      v(4, { layoutOnly: true }),
      v(3),
      v(2, { layoutOnly: true }),
      v(1),
    ]);
    expect(
      rows.map((r) =>
        r.kind === "moves"
          ? `moves ${r.versions.map((x) => x.number).join(",")}`
          : `v${r.version.number}`,
      ),
    ).toEqual(["v6", "moves 5,4", "v3", "v2", "v1"]);
  });

  it("never folds the current version away, and folds a run at the end", () => {
    const rows = historyRows([
      v(4, { layoutOnly: true }),
      v(3, { layoutOnly: true }),
      v(2, { layoutOnly: true }),
    ]);
    expect(rows.map((r) => r.kind)).toEqual(["version", "moves"]);
  });
});

describe("versionText", () => {
  it("prefers the author's message with the summary beside it", () => {
    expect(versionText(v(4, { message: "tp plan", summary: 'split "dot 2" into 2' }))).toBe(
      'tp plan — split "dot 2" into 2',
    );
    expect(versionText(v(4, { summary: 'renamed "W" to "V"' }))).toBe('renamed "W" to "V"');
    expect(versionText(v(1))).toBe("created");
  });
});

describe("ago", () => {
  const now = new Date("2026-11-24T12:00:00Z");
  it("says recent times in words and old ones as a date", () => {
    expect(ago("2026-11-24T11:59:50Z", now)).toBe("just now");
    expect(ago("2026-11-24T11:55:00Z", now)).toBe("5 min ago");
    expect(ago("2026-11-24T09:00:00Z", now)).toBe("3 h ago");
    expect(ago("2026-11-20T09:00:00Z", now)).toBe("2026-11-20");
  });
});

describe("movesLabel", () => {
  it("names the range and the count", () => {
    expect(movesLabel([v(15), v(14), v(13), v(12)])).toBe("versions 12–15: layout moves (4)");
  });
});
