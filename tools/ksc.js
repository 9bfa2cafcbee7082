// Runs the pinned npm kaitai-struct-compiler on .ksy files and prints, as JSON,
// {"files": {fileName: source}, "problems": [{"spec": path, "severity": "error"|"warning", "message"}]}.
//
// The npm build has no command line: it hard-codes its runtime configuration (read-only classes,
// empty Python package, C++98 with raw pointers) and drops its warnings. We load its source and
// patch two lines: the configuration line reads our settings, and the precompile step hands its
// problems (warnings included) to us. A compiler upgrade that changes either line fails loudly.
//
// usage: node ksc.js <lang>[,<lang>...] <pythonPackage> <readWrite:0|1> <debug:0|1> <spec.ksy>...
// With several languages the output is {lang: {files, problems}}.
// <lang> is any language of the compiler (`node ksc.js --languages` lists them), with cpp_stl
// split as the JVM compiler's --cpp-standard does: cpp_stl_98 (raw pointers) and cpp_stl_11
// (std::unique_ptr, #pragma once; also what C++14/17 code uses).
// Each spec is compiled on its own; imports resolve relative to the importing spec, as in ksc.
"use strict";
const fs = require("fs");
const path = require("path");
const Module = require("module");

const here = path.join(__dirname, "node_modules");
const yaml = require(path.join(here, "js-yaml"));
const kscPath = require.resolve(path.join(here, "kaitai-struct-compiler"));

const CPP = "new $c_Lio_kaitai_struct_CppRuntimeConfig($m_sci_Nil$(), false, false, false, " +
  "$m_Lio_kaitai_struct_CppRuntimeConfig$RawPointers$())";
const ORIGINAL =
  'var config = new $c_Lio_kaitai_struct_RuntimeConfig((!debug), debug, false, true, false, ' +
  CPP + ', "", ' +
  'new $c_Lio_kaitai_struct_JavaRuntimeConfig("", "io.kaitai.struct.ByteBufferKaitaiStream", ' +
  '"java.nio.BufferUnderflowException"), "Kaitai", "", "", "kaitai_struct_nim_runtime", "");';
const CPP11 = "new $c_Lio_kaitai_struct_CppRuntimeConfig($m_sci_Nil$(), true, true, true, " +
  "$m_Lio_kaitai_struct_CppRuntimeConfig$UniqueAndRawPointers$())";
const PATCHED = ORIGINAL
  .replace("(!debug), debug, false, true, false,",
           "(!debug), debug, false, true, globalThis.__kscReadWrite,")
  .replace(CPP, `(globalThis.__kscCpp11 ? ${CPP11} : ${CPP})`)
  .replace('"Kaitai", "", "", "kaitai_struct_nim_runtime"',
           '"Kaitai", "", globalThis.__kscPythonPackage, "kaitai_struct_nim_runtime"');
const PROBLEMS = "var problems = $as_sc_Iterable(problems$2);";
const PROBLEMS_PATCHED = PROBLEMS + " globalThis.__kscProblems(problems);";

function patchOnce(source, original, patched) {
  const count = source.split(original).length - 1;
  if (count !== 1) {
    throw new Error(`kaitai-struct-compiler changed: expected the line to patch exactly once, ` +
                    `found it ${count} times; update tools/ksc.js:\n${original}`);
  }
  return source.replace(original, () => patched);
}

function loadCompiler() {
  let source = fs.readFileSync(kscPath, "utf8");
  source = patchOnce(source, ORIGINAL, PATCHED);
  source = patchOnce(source, PROBLEMS, PROBLEMS_PATCHED);
  const m = new Module(kscPath, module);
  m.filename = kscPath;
  m.paths = Module._nodeModulePaths(path.dirname(kscPath));
  m._compile(source, kscPath);
  return m.exports;
}

// The message of a compiler failure: Scala.js wraps errors of the compile future in
// ExecutionException("Boxed Exception", cause); the cause is the one worth reading.
function failureMessage(err) {
  let e = err;
  while (e && e.jl_Throwable__f_e && String(e).includes("Boxed Exception")) e = e.jl_Throwable__f_e;
  const text = String(e);
  const frame = e && e.stack ? String(e.stack).split("\n").find((l) => /at \$c_Lio_kaitai_struct_(\w+)/.test(l)) : null;
  const where = frame ? ` (in ${frame.match(/\$c_Lio_kaitai_struct_(\w+)/)[1]})` : "";
  return text.trim() + where;
}

// Compile `files` for one language; returns {files, problems}.
async function compileAll(compiler, lang, debug, files) {
  globalThis.__kscCpp11 = lang === "cpp_stl_11";
  const kscLang = lang === "cpp_stl_98" || lang === "cpp_stl_11" ? "cpp_stl" : lang;
  const load = (file) => yaml.load(fs.readFileSync(file, "utf8"));
  const out = {};
  const problems = [];
  const seen = new Set();
  const report = (spec, severity, message) => {
    // An imported spec's warnings come again with every spec importing it: report them once.
    const key = severity === "warning" ? message : spec + "\n" + message;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push({ spec, severity, message });
    }
  };
  for (const file of files) {
    globalThis.__kscProblems = (found) => {
      const it = found.iterator__sc_Iterator();
      while (it.hasNext__Z()) {
        const p = it.next__O();
        report(file, p.severity__Lio_kaitai_struct_problems_ProblemSeverity().message__T(),
               p.message__T().trim());
      }
    };
    const base = path.dirname(path.resolve(file));
    const importer = {
      importYaml(name, mode) {
        // ksc passes relative imports already joined to the importing spec's folder.
        return Promise.resolve(load(path.join(base, name + ".ksy")));
      },
    };
    try {
      Object.assign(out, await compiler.compile(kscLang, load(file), importer, debug === "1"));
    } catch (err) {
      report(file, "error", failureMessage(err));
    }
  }
  return { files: out, problems };
}

async function main() {
  const [langs, pythonPackage, readWrite, debug, ...files] = process.argv.slice(2);
  const compiler = loadCompiler();
  if (langs === "--languages") {
    process.stdout.write(JSON.stringify(Array.from(compiler.languages)));
    return;
  }
  globalThis.__kscPythonPackage = pythonPackage;
  globalThis.__kscReadWrite = readWrite === "1";
  if (!langs.includes(",")) {
    process.stdout.write(JSON.stringify(await compileAll(compiler, langs, debug, files)));
    return;
  }
  const out = {};
  for (const lang of langs.split(",")) out[lang] = await compileAll(compiler, lang, debug, files);
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + "\n");
  process.exit(1);
});
