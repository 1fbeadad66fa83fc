"""`import nautobot` and `export nautobot` before any server answers: the token, the URL and a
server that is not there are clear errors (exit 2), never a traceback, and the token is never
printed. The commands against a real Nautobot server: tests/test_nautobot.py."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from vlanroute.cli import main

TOKEN = "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])       # closed again when the block ends: nothing listens there


def test_no_token_no_url_and_a_bad_url(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("NAUTOBOT_URL", raising=False)
    monkeypatch.delenv("NAUTOBOT_TOKEN", raising=False)
    assert main(["import", "nautobot", "--location", "hall"]) == 2
    assert "--url: no Nautobot server given" in capsys.readouterr().err
    assert main(["import", "nautobot", "--url", "ftp://x", "--location", "hall"]) == 2
    assert "'ftp://x' is not an http(s) URL" in capsys.readouterr().err
    assert main(["import", "nautobot", "--url", "http://127.0.0.1:1", "--location", "hall"]) == 2
    err = capsys.readouterr().err
    assert "NAUTOBOT_TOKEN: $NAUTOBOT_TOKEN is not set" in err and "never read from a file" in err
    assert main(["import", "nautobot", "--url", "http://127.0.0.1:1", "--platform-map", "nonsense"]) == 2
    assert "--platform-map: bad mapping 'nonsense'" in capsys.readouterr().err


def test_a_server_that_is_not_there(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                    tmp_path: Path) -> None:
    monkeypatch.setenv("NAUTOBOT_TOKEN", TOKEN)
    url = f"http://127.0.0.1:{_closed_port()}"
    assert main(["import", "nautobot", "--url", url, "--location", "hall", "--json"]) == 2
    out, err = capsys.readouterr()
    assert "cannot reach Nautobot while looking up location 'hall'" in out + err
    assert TOKEN not in out + err and "Traceback" not in out + err
    assert main(["import", "nautobot", "--url", url]) == 2
    assert "no selection given" in capsys.readouterr().err
    # export reads the plan first: a directory without one is refused before any request.
    assert main(["export", "nautobot", str(tmp_path), "--url", url, "--location", "hall"]) == 2
    err = capsys.readouterr().err
    assert "plan.json" in err and TOKEN not in err
