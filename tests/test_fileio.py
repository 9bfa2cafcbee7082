"""`table/fileio.py`, the one seam to a table's bytes: `LocalFileIO`'s writes never overwrite
(`write_new`), create a name once (`create_exclusive`: of racing writers exactly one wins, the
others get `CommitConflict`), leave no temporary file; reads resolve external URIs; a
filesystem without an atomic create-if-absent refuses every write by name, writing nothing."""

from __future__ import annotations

import pickle
import threading
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from paimon_schema.table.errors import CommitConflict, TableError
from paimon_schema.table.fileio import ArrowFileIO, LocalFileIO, fileio_for, open_fileio


def test_write_new_refuses_an_existing_name(tmp_path: Path) -> None:
    io = LocalFileIO()
    target = str(tmp_path / "manifest-1")
    io.write_new(target, b"first")
    with pytest.raises(FileExistsError):
        io.write_new(target, b"second")
    assert Path(target).read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest-1"]


def test_create_exclusive_conflicts_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    io = LocalFileIO()
    target = str(tmp_path / "snapshot-4")
    io.create_exclusive(target, b'{"id": 4}')
    with pytest.raises(CommitConflict, match="snapshot-4 already exists"):
        io.create_exclusive(target, b'{"id": 4, "loser": true}')
    assert Path(target).read_bytes() == b'{"id": 4}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot-4"]


def test_racing_creates_have_exactly_one_winner(tmp_path: Path) -> None:
    target = str(tmp_path / "snapshot-7")
    barrier = threading.Barrier(6)
    outcomes: dict[int, str] = {}

    def writer(n: int) -> None:
        io = LocalFileIO()                           # each writer opens the table itself
        barrier.wait()
        try:
            io.create_exclusive(target, f"writer {n}".encode())
            outcomes[n] = "won"
        except CommitConflict:
            outcomes[n] = "conflict"

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [n for n, outcome in outcomes.items() if outcome == "won"]
    assert len(outcomes) == 6 and len(winners) == 1
    assert Path(target).read_bytes() == f"writer {winners[0]}".encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot-7"]


def test_overwrite_delete_mkdirs(tmp_path: Path) -> None:
    io = LocalFileIO()
    directory = str(tmp_path / "a" / "b")
    io.mkdirs(directory)
    io.mkdirs(directory)                             # already there: nothing to do
    hint = f"{directory}/LATEST"
    io.overwrite(hint, b"3")
    io.overwrite(hint, b"4")
    assert Path(hint).read_bytes() == b"4" and io.list(directory) == ["LATEST"]
    io.delete(hint)
    io.delete(hint)                                  # a missing file is not an error
    assert io.list(directory) == []


def test_reads_and_external_uris(tmp_path: Path) -> None:
    io, root = open_fileio(tmp_path)
    assert isinstance(io, LocalFileIO) and root == str(tmp_path)
    (tmp_path / "data.bin").write_bytes(bytes(range(10)))
    path = str(tmp_path / "data.bin")
    assert io.read_bytes(path, 3, 4) == bytes([3, 4, 5, 6])
    assert io.read_bytes(path, 8) == bytes([8, 9])
    assert io.read_bytes(f"file:{path}") == bytes(range(10))      # an `_EXTERNAL_PATH`
    assert io.resolve(f"file://{path}") == (io, path)
    assert io.size(path) == 10 and io.exists(path) and not io.is_dir(path)
    assert io.is_dir(str(tmp_path)) and not io.exists(str(tmp_path))
    assert io.list(str(tmp_path / "nope")) == [] and io.uri(path) == f"file://{path}"
    with io.open_input(path) as f:
        assert f.read_at(2, 1) == bytes([1, 2])
    for read in (io.read_bytes, io.size):
        with pytest.raises(TableError, match="missing.bin does not exist"):
            read(str(tmp_path / "missing.bin"))


def test_a_filesystem_without_atomic_create_refuses_every_write(tmp_path: Path) -> None:
    io = fileio_for(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    assert type(io) is ArrowFileIO
    (tmp_path / "x").write_bytes(b"kept")
    assert io.read_bytes("x") == b"kept"                           # reads work
    reason = "x is on SubTreeFileSystem: writing needs an atomic create-if-absent"
    for write in (lambda: io.check_writable("x"), lambda: io.write_new("x", b"new"),
                  lambda: io.create_exclusive("x", b"new"), lambda: io.overwrite("x", b"new"),
                  lambda: io.delete("x"), lambda: io.mkdirs("x")):
        with pytest.raises(TableError, match=reason):
            write()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x"] and (tmp_path / "x").read_bytes() == b"kept"
    # a local table's external path on another filesystem is refused the same way
    with pytest.raises(TableError, match="is on .*: writing needs an atomic create-if-absent"):
        LocalFileIO().write_new("mock://bucket/f", b"new")


def test_fileio_travels_to_workers_by_pickle(tmp_path: Path) -> None:
    local = LocalFileIO()
    local.write_new(str(tmp_path / "a"), b"1")       # pending directory syncs are not shipped
    assert pickle.loads(pickle.dumps(local)) == local
    arrow = fileio_for(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    copy = pickle.loads(pickle.dumps(arrow))
    assert copy == arrow and copy.read_bytes("a") == b"1"
