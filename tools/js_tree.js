// Parses files with JavaScript parsers generated from the specs and prints each parse tree as
// JSON: what a reader of the Kaitai Web IDE sees, for tests/test_kaitai_js.py to compare with
// the Python parsers' trees.
//
// usage: node js_tree.js <folder of generated .js parsers> < jobs.json
// jobs.json: [{"id", "module" (file stem), "class", "args": [numbers], "file" | "hex",
//              "debug": true|false}]
// prints one JSON line per job: {"id", "tree"} or {"id", "error"}.
//
// Debug mode is the Web IDE's: the constructor does not read, `_read()` does, and every object
// records field positions in `_debug`. A tree holds every sequence field and every instance
// (instances are getters, read here in declaration order, as the Web IDE does when you unfold
// them); byte arrays are reduced to their length and SHA-1, numbers are printed as JavaScript
// holds them (an 8-byte integer as a double).
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const Module = require("module");

const runtimeDir = path.join(__dirname, "node_modules");
process.env.NODE_PATH = [runtimeDir, process.env.NODE_PATH || ""].join(path.delimiter);
Module._initPaths();
const KaitaiStream = require("kaitai-struct/KaitaiStream");

function dump(value) {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) {
    return { bytes: value.length, sha1: crypto.createHash("sha1").update(value).digest("hex") };
  }
  if (Array.isArray(value)) return value.map(dump);
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (typeof value === "string") return { str: value };
  if (typeof value === "object" && value._io instanceof KaitaiStream) return struct(value);
  return { unknown: String(value) };
}

function struct(obj) {
  const out = { _type: obj.constructor.name };
  for (const key of Object.keys(obj)) {
    if (!key.startsWith("_")) out[key] = dump(obj[key]);
  }
  const proto = Object.getPrototypeOf(obj);
  for (const key of Object.getOwnPropertyNames(proto)) {
    const desc = Object.getOwnPropertyDescriptor(proto, key);
    if (!desc || !desc.get || key.startsWith("_")) continue;
    try {
      out[key] = dump(obj[key]);
    } catch (err) {
      out[key] = { error: err && err.name ? err.name : String(err) };
    }
  }
  return out;
}

function main() {
  const folder = path.resolve(process.argv[2]);
  const jobs = JSON.parse(fs.readFileSync(0, "utf8"));
  for (const job of jobs) {
    const Parser = require(path.join(folder, job.module + ".js"))[job.class];
    const bytes = job.file ? fs.readFileSync(job.file) : Buffer.from(job.hex, "hex");
    const io = new KaitaiStream(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
    let line;
    try {
      const obj = new Parser(io, null, null, ...(job.args || []));
      if (job.debug) obj._read();
      line = { id: job.id, tree: struct(obj) };
    } catch (err) {
      line = { id: job.id, error: err && err.name ? err.name : String(err) };
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  }
}

main();
