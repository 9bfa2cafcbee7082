"""What the CLI's commands share: exit codes, and the argument types the `demo` and `pipeline`
subcommands share with their own entry points (`python -m paimon_schema.selfcheck.pipeline`),
checked by argparse before anything starts. Here rather than in `main`, which imports the
commands (`cli.table`): a command importing `main` back would be an import circle."""

from __future__ import annotations

import argparse
from pathlib import Path

EXIT_OK, EXIT_BAD_FILE, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 128 + 2          # the shell's code for a process ended by SIGINT (Ctrl-C)


def rows_argument(text: str) -> int:
    """`pipeline --rows`: a whole number of at least 2 (one row in each partition)."""
    try:
        rows = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if rows < 2:
        raise argparse.ArgumentTypeError(f"{rows} is too few: at least 2 (one row in each of "
                                         f"the two partitions)")
    return rows


def directory_argument(text: str) -> Path:
    """`--keep DIR`: a directory, created when missing; a file or an unwritable place is an
    argument error (before anything starts)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot create {text}: {exc.strerror or exc}") from None
    return path


def warehouse_argument(text: str) -> Path:
    """`pipeline --keep DIR`: a directory as `--keep`, not already holding the pipeline's table
    (a second run would mix two tables' metadata)."""
    path = directory_argument(text)
    if (path / "demo.db" / "orders").exists():
        raise argparse.ArgumentTypeError(f"{text} already holds demo.db/orders: pass an empty "
                                         f"or new directory")
    return path
