import { describe, expect, it } from "vitest";
import { errorText, handOverQuestion, invitedText, teamOptions } from "./share";

describe("share dialog wording", () => {
  it("shows the envelope's message, or names the status", () => {
    expect(errorText({ error: { code: "forbidden", message: 'your role is "editor"' } }, 403)).toBe(
      'your role is "editor"',
    );
    expect(errorText(null, 502)).toBe("the server answered 502");
  });

  it("says a username was added and an email invited, without telling whether it is known", () => {
    expect(invitedText("bob", "added", "editor")).toBe("bob is now an editor");
    expect(invitedText("bob", "added", "viewer")).toBe("bob is now a viewer");
    expect(invitedText("eve@example.org", "invited", "reviewer")).toBe(
      "an invitation was sent to eve@example.org (if it is new to geon) as reviewer",
    );
  });
});

describe("the owner's choices", () => {
  it("offers no team, their teams, and the graph's own team when it is not one of theirs", () => {
    expect(teamOptions(["kernels", "sharding"], null)).toEqual([
      ["", "no team"],
      ["kernels", "kernels"],
      ["sharding", "sharding"],
    ]);
    expect(teamOptions(["kernels"], "infra")).toEqual([
      ["", "no team"],
      ["infra", "infra"],
      ["kernels", "kernels"],
    ]);
  });
  it("says what handing over does before it is done", () => {
    expect(handOverQuestion("bob")).toBe(
      "Hand this graph over to bob? They become its owner (only they can delete it or hand it on) and you an editor.",
    );
  });
});
