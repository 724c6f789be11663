// Builds the console's page into DIST: index.html and the favicon as they are, and one
// minified script (plus the chunks it imports when needed) and one stylesheet bundled by
// esbuild from src/main.jsx (Preact, uPlot and the styles they import). No inline script or style anywhere: the console's answers carry a
// Content-Security-Policy with script-src 'self' and style-src 'self'.
//   node build.mjs DIST STAMP     (run by web/console/embed.cmake)
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [dist, stamp] = process.argv.slice(2);
if (!dist || !stamp) {
  console.error("usage: node build.mjs DIST STAMP");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));

// Emptied first, so a file removed from src/ is not embedded any more.
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });
await build({
  entryPoints: { app: join(here, "src/main.jsx") },
  outdir: join(dist, "assets"),
  bundle: true,
  // Modules imported with import() (uPlot, for the Overview's charts) are chunks of their own,
  // assets/chunk-<hash>.js, read when first needed.
  splitting: true,
  chunkNames: "chunk-[hash]",
  minify: true,
  format: "esm",
  target: ["chrome109", "firefox115", "safari16"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync(join(here, "src/index.html"), join(dist, "index.html"));
copyFileSync(join(here, "src/favicon.svg"), join(dist, "assets/favicon.svg"));
writeFileSync(stamp, "");
