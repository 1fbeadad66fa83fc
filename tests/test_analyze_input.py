"""`vlanroute analyze --patterns` under hostile input (issue 41 items 5 and 7): a flows file
that is not one is refused without a line of it in the message (it may be /etc/shadow),
and link speeds, byte counts and flows that have no throughput are clear errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vlanroute.cli import main

ROOT = Path(__file__).resolve().parent.parent
RING = str(ROOT / "inventories" / "seed-ring.yaml")
SHADOW = "root:$6$Zx9secrethash0123456789$abcdefghijklmnop:19000:0:99999:7:::\n" \
         "daemon:*:19000:0:99999:7:::\n"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return rc, out, err


@pytest.mark.parametrize("content", [SHADOW, "node001 node002 extra-secret-word\n", "n0de001 s3cret\n",
                                     "node001 node002\nroot:x:0:0:root:/root:/bin/bash\n"])
def test_catalogue_security_analyze_flows_file_is_never_quoted(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              content: str) -> None:
    path = tmp_path / "shadow"
    path.write_text(content)
    rc, out, err = cli(capsys, "analyze", RING, "--patterns", str(path))
    assert rc == 2
    assert str(path) in err and "line" in err and "fix:" in err
    shown = (err + out).replace(str(path), "PATH")
    for word in ("secret", "root", "daemon", "s3cret", "bash", "$6$"):
        assert word not in shown, (word, err)


def test_analyze_names_an_unknown_host_that_looks_like_a_name(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flows.txt"
    path.write_text("# comment\nnode001 node002\nnode001 nod002\n")
    rc, _, err = cli(capsys, "analyze", RING, "--patterns", str(path))
    assert rc == 2 and "line 3" in err and "word 2" in err and "not a host of the plan" in err
    assert "nod002" not in err.replace("node002", "") and "did you mean node002?" in err


@pytest.mark.parametrize("kind", ["utf8", "fifo", "device", "large"])
def test_catalogue_traceback_analyze_flows_file_not_text(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        kind: str) -> None:
    path = tmp_path / "flows"
    if kind == "utf8":
        path.write_bytes(b"node001 \xff\xfe\n")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    else:
        with open(path, "wb") as fh:
            fh.truncate(64 << 20)           # sparse: 64 MiB of zero bytes
    rc, _, err = cli(capsys, "analyze", RING, "--patterns", str(path))
    assert rc == 2 and "fix:" in err


def test_catalogue_traceback_analyze_self_flow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flows.txt"
    path.write_text("node001 node001\n")
    rc, _, err = cli(capsys, "analyze", RING, "--patterns", str(path))
    assert rc == 2 and "line 1" in err and "itself" in err and "fix:" in err


@pytest.mark.parametrize("speed", ["nan", "inf", "-inf", "1e400", "NaN", "0", "1e9"])
def test_catalogue_traceback_analyze_link_speed_not_a_speed(capsys: pytest.CaptureFixture[str], speed: str) -> None:
    rc, out, err = cli(capsys, "analyze", RING, "--patterns", "all-to-all", f"--link-speed={speed}")
    assert rc == 2 and "--link-speed" in err, err
    assert "nan" not in out.lower()


def test_analyze_link_speed_scales_the_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    import json
    rates = []
    for speed in ("1", "10"):
        rc, out, _ = cli(capsys, "analyze", RING, "--patterns", "all-to-all", "--link-speed", speed, "--json")
        assert rc == 0
        rows = json.loads(out)["throughput"][0]["rows"]
        rates.append(rows[0]["effective_gbps"])
    assert rates[1] == pytest.approx(10 * rates[0], rel=1e-3)
