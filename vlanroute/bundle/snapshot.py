"""A bundle read once: every file under OUTDIR in memory, with one digest over all of them.

`push` takes the snapshot before it checks the bundle and shows the diff, checks and sends
only what the snapshot holds, and compares the digest of OUTDIR as it is on disk with the
snapshot's just before the first command: a bundle changed (re-rendered, edited, a file
added) while the person read the diff is refused, not pushed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from vlanroute.bundle.document import PlanDocument, plan_document
from vlanroute.bundle.manifest import MANIFEST_FILE, tree_files
from vlanroute.bundle.reader import OUTDIR_FIX, PLAN_FILE, check_outdir
from vlanroute.errors import UserError
from vlanroute.safeio.reading import load_json

MAX_BUNDLE_BYTES = 1 << 30       # far above any real bundle (a 32x32 torus: tens of MB)


@dataclass(frozen=True)
class Entry:
    data: bytes | None           # None: not a regular file (a symbolic link, a FIFO, ...)
    executable: bool

    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest() if self.data is not None else "not-a-file"


def _entry(path: Path) -> Entry:
    """The file's bytes, read without following a symbolic link at its own name."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return Entry(None, False)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Entry(None, False)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return Entry(b"".join(chunks), bool(st.st_mode & 0o111))
    finally:
        os.close(fd)


@dataclass(frozen=True)
class BundleSnapshot:
    outdir: Path
    entries: dict[str, Entry]    # relative POSIX path -> entry; manifest.json included

    @classmethod
    def take(cls, outdir: Path) -> BundleSnapshot:
        check_outdir(outdir)
        entries: dict[str, Entry] = {}
        total = 0
        try:
            names = tree_files(outdir) + ([MANIFEST_FILE] if (outdir / MANIFEST_FILE).exists() else [])
            for rel in names:
                entries[rel] = e = _entry(outdir / rel)
                total += len(e.data or b"")
                if total > MAX_BUNDLE_BYTES:
                    raise UserError(f"the bundle is larger than {MAX_BUNDLE_BYTES >> 20} MiB: not one render wrote",
                                    file=str(outdir), fix=OUTDIR_FIX)
        except OSError as exc:
            raise UserError(f"cannot read the bundle: {exc.strerror or exc}", file=str(outdir),
                            fix=OUTDIR_FIX) from None
        return cls(outdir, entries)

    def digest(self) -> str:
        """sha256 over every (path, mode, content digest), in path order."""
        h = hashlib.sha256()
        for rel in sorted(self.entries):
            e = self.entries[rel]
            h.update(f"{rel}\0{int(e.executable)}\0{e.digest()}\n".encode())
        return h.hexdigest()

    def text(self, rel: str) -> str:
        e = self.entries.get(rel)
        if e is None or e.data is None:
            raise UserError("missing or not a regular file", file=str(self.outdir / rel), fix=OUTDIR_FIX)
        try:
            return e.data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError("not UTF-8 text", file=str(self.outdir / rel), fix=OUTDIR_FIX) from None

    def plan(self) -> PlanDocument:
        """plan.json as held in the snapshot, validated as bundle.reader.read_plan does."""
        path = self.outdir / PLAN_FILE
        if PLAN_FILE not in self.entries:
            raise UserError(f"no {PLAN_FILE} here", file=str(self.outdir), fix=OUTDIR_FIX)
        try:
            data = load_json(self.text(PLAN_FILE), str(path))
        except ValueError as exc:
            raise UserError(f"not valid JSON: {exc}", file=str(path),
                            fix="render again; plan.json must be the JSON that `vlanroute render` wrote") from None
        return plan_document(data, str(path))

    def changes_on_disk(self) -> list[str]:
        """The files under OUTDIR that differ from the snapshot now (changed, added, removed)."""
        now = BundleSnapshot.take(self.outdir)
        return sorted(rel for rel in set(self.entries) | set(now.entries)
                      if self.entries.get(rel) != now.entries.get(rel))
