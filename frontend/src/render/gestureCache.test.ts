import { describe, expect, it } from "vitest";
import { serves } from "./gestureCache";

const world = { x: -40, y: -40, w: 4000, h: 3000 };
const canvas = { width: 800, height: 600 };

describe("serves: when a moving frame is the graph's image, scaled", () => {
  it("draws an image far out, keeps it while the scale stays within 1.5x, and draws closer in full", () => {
    // given a graph 4000 x 3000 on an 800 x 600 canvas (it fits at 0.2)
    // then at the fit scale, with no image yet, one is drawn
    expect(serves(world, canvas, 0.2, null)).toBe("new image");
    // the image drawn at 0.2 serves from 0.2 / 1.5 to 0.2 * 1.5
    expect(serves(world, canvas, 0.29, 0.2)).toBe("image");
    expect(serves(world, canvas, 0.14, 0.2)).toBe("image");
    expect(serves(world, canvas, 0.13, 0.2)).toBe("new image");
    // past twice the canvas (0.4 here) every frame is drawn in full
    expect(serves(world, canvas, 0.39, 0.3)).toBe("image");
    expect(serves(world, canvas, 0.41, 0.3)).toBe("no");
    expect(serves({ ...world, h: 9000 }, canvas, 0.2, 0.2)).toBe("no");
  });
});
