import { describe, expect, it } from "vitest";
import { taskFromForm, taskToForm } from "./lessonWriter";

describe("a written step's task", () => {
  it("is what its fields say: a tensor with axes, a kernel used, no errors left", () => {
    expect(taskFromForm({ tensor: " x ", axes: "H, W-1", kernel: "", clean: true })).toEqual({
      tensor: "x",
      axes: ["H", "W-1"],
      clean: true,
    });
    expect(taskFromForm({ tensor: "", axes: "", kernel: "op:cast_axes", clean: false })).toEqual({
      kernel: "op:cast_axes",
    });
  });

  it("is none when every field is empty, and reads back into the same fields", () => {
    expect(taskFromForm({ tensor: "", axes: "", kernel: "", clean: false })).toBeNull();
    const form = { tensor: "y", axes: "C1, N", kernel: "op:cast_axes", clean: true };
    expect(taskToForm(taskFromForm(form))).toEqual(form);
    expect(taskToForm(null)).toEqual({ tensor: "", axes: "", kernel: "", clean: false });
  });
});
