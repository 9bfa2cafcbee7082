// Renders Graphviz dot sources to SVG with the pinned WebAssembly build of Graphviz.
// usage: node render_svg.js < {"name.dot": "digraph ..."}  > {"name.svg": "<svg ..."}
"use strict";
const path = require("path");
const { instance } = require(path.join(__dirname, "node_modules", "@viz-js", "viz"));

async function main() {
  let input = "";
  for await (const chunk of process.stdin) input += chunk;
  const viz = await instance();
  const out = {};
  for (const [name, dot] of Object.entries(JSON.parse(input))) {
    out[name.replace(/\.dot$/, ".svg")] = viz.renderString(dot, { format: "svg" });
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
