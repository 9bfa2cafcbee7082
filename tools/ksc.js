// Runs the pinned npm kaitai-struct-compiler on .ksy files and prints {fileName: source} as JSON.
//
// The npm build has no command line and hard-codes its runtime configuration (read-only classes,
// empty Python package). We load its source, swap that one configuration line for one that reads
// our settings, and fail loudly if a compiler upgrade changes the line we patch.
//
// usage: node ksc.js <lang> <pythonPackage> <readWrite:0|1> <debug:0|1> <spec.ksy>...
"use strict";
const fs = require("fs");
const path = require("path");
const Module = require("module");

const here = path.join(__dirname, "node_modules");
const yaml = require(path.join(here, "js-yaml"));
const kscPath = require.resolve(path.join(here, "kaitai-struct-compiler"));

const ORIGINAL =
  'var config = new $c_Lio_kaitai_struct_RuntimeConfig((!debug), debug, false, true, false, ' +
  'new $c_Lio_kaitai_struct_CppRuntimeConfig($m_sci_Nil$(), false, false, false, ' +
  '$m_Lio_kaitai_struct_CppRuntimeConfig$RawPointers$()), "", ' +
  'new $c_Lio_kaitai_struct_JavaRuntimeConfig("", "io.kaitai.struct.ByteBufferKaitaiStream", ' +
  '"java.nio.BufferUnderflowException"), "Kaitai", "", "", "kaitai_struct_nim_runtime", "");';
const PATCHED = ORIGINAL
  .replace("(!debug), debug, false, true, false,",
           "(!debug), debug, false, true, globalThis.__kscReadWrite,")
  .replace('"Kaitai", "", "", "kaitai_struct_nim_runtime"',
           '"Kaitai", "", globalThis.__kscPythonPackage, "kaitai_struct_nim_runtime"');

function loadCompiler() {
  const source = fs.readFileSync(kscPath, "utf8");
  const count = source.split(ORIGINAL).length - 1;
  if (count !== 1) {
    throw new Error(`kaitai-struct-compiler changed: expected its runtime configuration line ` +
                    `exactly once, found it ${count} times; update tools/ksc.js`);
  }
  const m = new Module(kscPath, module);
  m.filename = kscPath;
  m.paths = Module._nodeModulePaths(path.dirname(kscPath));
  m._compile(source.replace(ORIGINAL, PATCHED), kscPath);
  return m.exports;
}

async function main() {
  const [lang, pythonPackage, readWrite, debug, ...files] = process.argv.slice(2);
  globalThis.__kscPythonPackage = pythonPackage;
  globalThis.__kscReadWrite = readWrite === "1";
  const compiler = loadCompiler();
  const load = (file) => yaml.load(fs.readFileSync(file, "utf8"));
  const importer = {
    importYaml(name, mode) {
      // Imports are relative to the importing spec's folder; all our specs live in one folder.
      const base = path.dirname(path.resolve(files[0]));
      return Promise.resolve(load(path.join(base, name + ".ksy")));
    },
  };
  const out = {};
  for (const file of files) {
    Object.assign(out, await compiler.compile(lang, load(file), importer, debug === "1"));
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  if (err && typeof err === "object" && err.toString) process.stderr.write(err.toString() + "\n");
  process.exit(1);
});
