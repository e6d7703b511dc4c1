// The canvas's colours: the boxes, edges and marks (render/), and one colour per declared axis
// (the same on every client), used by the canvas's chips and the panels alike.

export const COLORS = {
  background: "#f6f7fa",
  grid: "#e8ebf1",
  tensorFill: "#e3edfd",
  tensorStroke: "#2f6fde",
  operationFill: "#fff1dc",
  operationStroke: "#c7781a",
  selected: "#0b57d0",
  issueStroke: "#d92d20",
  issueFill: "#fde8e7",
  edge: "#7a8599",
  wire: "#0b57d0",
  text: "#1d2430",
  subtext: "#5b6677",
  search: "#f5b700",
  collective: "#7c3aed",
} as const;

/** One colour per axis, by order of declaration (the same on every client). */
export const AXIS_PALETTE = [
  "#1f77b4",
  "#d6462b",
  "#2ca02c",
  "#9467bd",
  "#e08a00",
  "#17becf",
  "#c2417f",
  "#6b7d12",
  "#8c564b",
  "#4a5bd6",
];

export function axisColor(axis: string, order: readonly string[]): string {
  const i = order.indexOf(axis);
  return i < 0 ? "#8a94a6" : AXIS_PALETTE[i % AXIS_PALETTE.length]!;
}
