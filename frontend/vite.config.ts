import { defineConfig } from "vitest/config";

// The bundle is served by Django (whitenoise) from geon/static/editor/ with fixed names, so the
// editor template can include it without a manifest.
export default defineConfig({
  base: "/static/editor/",
  build: {
    outDir: "../geon/static/editor",
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 2500,
    rollupOptions: {
      input: {
        editor: "src/main.ts",
        gallery: "src/gallery/main.ts",
        diff: "src/diff/main.ts",
        class: "src/learn/classPage.ts",
      },
      output: {
        entryFileNames: "[name].js",
        chunkFileNames: "[name].js",
        assetFileNames: "[name][extname]",
      },
    },
  },
  // The layout worker is an ES module (it is started with { type: "module" }).
  worker: { format: "es" },
  test: { include: ["src/**/*.test.ts"], environment: "node" },
});
