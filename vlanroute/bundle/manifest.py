"""OUTDIR/manifest.json: the sha256 of every file render wrote, so nobody can change,
remove or add a file in a bundle unnoticed (a host script runs as root on every host, a
refresh job from cron, a switch config on the fabric).

    {"format": "vlanroute-manifest/1",
     "files": {"plan.json": {"sha256": "...", "executable": false}, ...},
     "render": {"learning_method": "system", "host_network": "script", "per_host_scripts": false}}

"render" holds the render options that plan.json does not: with them `verify` renders the
bundle again from plan.json and compares it line by line (vlanroute.render.exact).

Written by render over whatever it put in the temporary tree (so any new kind of file is
covered without changing this module); checked by `verify`, and by `push` and `emulate`
before they use the bundle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import hashlib
import json
import os
from pathlib import Path

from vlanroute.errors import UserError
from vlanroute.safeio.reading import BUNDLE_LIMIT, load_json, read_text_file

MANIFEST_FILE = "manifest.json"
FORMAT = "vlanroute-manifest/1"
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def tree_files(root: Path) -> list[str]:
    """Every entry below `root` that is not a directory (symbolic links included, never
    followed), as POSIX relative paths, sorted; the manifest itself left out."""
    found = []
    for folder, dirs, files in os.walk(root):
        base = Path(folder)
        for d in list(dirs):
            if (base / d).is_symlink():          # os.walk does not follow it: count it as a file
                files.append(d)
        for name in files:
            rel = (base / name).relative_to(root).as_posix()
            if rel != MANIFEST_FILE:
                found.append(rel)
    return sorted(found)


def build_manifest(root: Path, render: dict[str, object] | None = None) -> dict[str, object]:
    files = {}
    for rel in tree_files(root):
        path = root / rel
        files[rel] = {"sha256": file_sha256(path), "executable": bool(path.stat().st_mode & 0o111)}
    out: dict[str, object] = {"format": FORMAT, "files": files}
    if render is not None:
        out["render"] = render
    return out


def write_manifest(root: Path, render: dict[str, object] | None = None) -> Path:
    path = root / MANIFEST_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fh.fileno(), 0o644)       # whatever the umask (render's other files, write.py)
        fh.write(json.dumps(build_manifest(root, render), indent=1, sort_keys=True) + "\n")
    return path


def read_manifest(outdir: Path) -> dict[str, dict[str, object]] | None:
    """The files table, or None when OUTDIR has no manifest (rendered by an older version)."""
    path = outdir / MANIFEST_FILE
    if not os.path.lexists(path):
        return None
    try:
        data = load_json(read_text_file(path, limit=BUNDLE_LIMIT, what="manifest", fix="render OUTDIR again"),
                         str(path))
    except ValueError as exc:
        raise UserError(f"cannot read the manifest: {exc}", file=str(path),
                        fix="render OUTDIR again") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(files, dict):
        raise UserError(f"not a {FORMAT} file", file=str(path), fix="render OUTDIR again")
    return files


@dataclass
class ManifestReport:
    outdir: Path
    present: bool = True                  # False: no manifest.json at all
    modified: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.present and not (self.modified or self.missing or self.extra)

    def problems(self) -> list[str]:
        if not self.present:
            return [f"{self.outdir / MANIFEST_FILE}: missing: OUTDIR has no manifest, so its "
                    "files cannot be checked (render it again)"]
        return ([f"{self.outdir / p}: modified since render (sha256 or mode differs)" for p in self.modified]
                + [f"{self.outdir / p}: missing (render wrote it)" for p in self.missing]
                + [f"{self.outdir / p}: extra (render did not write it)" for p in self.extra])


def check_manifest(outdir: Path) -> ManifestReport:
    """Compare OUTDIR with its manifest: every file modified, missing or extra."""
    report = ManifestReport(outdir)
    files = read_manifest(outdir)
    if files is None:
        report.present = False
        return report
    actual = set(tree_files(outdir))
    for rel, entry in sorted(files.items()):
        path = outdir / rel
        if rel not in actual:
            report.missing.append(rel)
            continue
        if path.is_symlink() or not path.is_file():
            report.modified.append(rel)
            continue
        executable = bool(path.stat().st_mode & 0o111)
        if (not isinstance(entry, dict) or file_sha256(path) != entry.get("sha256")
                or executable != entry.get("executable")):
            report.modified.append(rel)
    report.extra = sorted(actual - set(files))
    return report


def require_intact(outdir: Path, command: str, override: str | None) -> None:
    """Refuse a bundle that fails its manifest (UserError naming the files)."""
    report = check_manifest(outdir)
    if report.ok:
        return
    shown = report.problems()
    more = f" (and {len(shown) - 10} more)" if len(shown) > 10 else ""
    raise UserError(f"{command} refuses this bundle: it differs from what render wrote:\n  "
                    + "\n  ".join(shown[:10]) + more,
                    file=str(outdir / MANIFEST_FILE),
                    fix=f"render OUTDIR again (`vlanroute verify {outdir}` lists every difference)"
                        + (f", or pass {override} if you changed it on purpose" if override else ""))
