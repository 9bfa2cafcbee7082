"""Floor 5, the `paimon-schema` command line: `main` parses arguments and dispatches,
`presenters` shows each layout to a person and as JSON, `hexdump` annotates bytes with the
spec's field names and `html` lays them out as a page, `table` shows a whole table. Layout
names, aliases and parsers all come from the one list in `layouts.registry`."""
