"""Floor 2, what the generated code runs on: `kaitai` runs the generated Kaitai parsers (the
only reader of Kaitai's `_debug` spans), `constructs` is the runtime the generated Construct
codecs import, `javautf` Java's modified UTF-8."""
