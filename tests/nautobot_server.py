"""A real Nautobot server on loopback for the tests (tests/test_nautobot.py): PostgreSQL and
Redis from Debian, Nautobot from PyPI (the `nautobot` extra), each on its own port on
127.0.0.1, with its own data under a temporary directory.

`start(workdir)` initialises PostgreSQL (initdb), starts it and Redis, writes Nautobot's
configuration (`nautobot-server init`), runs the migrations, makes a superuser with an API
token and starts `nautobot-server runserver`; `stop(workdir)` stops them all and removes the
data. The processes run in sessions of their own, so that the pytest-xdist worker that
started them can end before the others are done (tests/conftest.py stops them once the
whole run is over). `missing()` says why a server cannot start here (the tests then skip).

PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user that
Debian's package creates, with its data in a directory of that user's own.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path



def _pg_bin() -> Path:
    """Debian's PostgreSQL programs (/usr/lib/postgresql/VERSION/bin, 15 on Debian 12): the newest."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name)
                   if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()
STATE = "nautobot-server.json"


@dataclass
class Server:
    url: str
    token: str
    root: str                # NAUTOBOT_ROOT and the logs
    pgdata: str              # PostgreSQL's data (its own directory: owned by postgres when root)
    pids: list[int]          # the process groups to stop, last started first
    seconds: dict[str, float]   # what each start-up step took

    def env(self) -> dict[str, str]:
        return {"NAUTOBOT_URL": self.url, "NAUTOBOT_TOKEN": self.token}


def _nautobot_server() -> str | None:
    found = Path(sys.executable).with_name("nautobot-server")
    return str(found) if found.exists() else shutil.which("nautobot-server")


def missing() -> str | None:
    """Why a Nautobot server cannot start here, or None."""
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not (PG_BIN / tool).exists():
            return f"PostgreSQL is not installed ({PG_BIN / tool}; Debian package postgresql, .ci/packages.txt)"
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (Debian package redis-server, .ci/packages.txt)"
    if _nautobot_server() is None:
        return "nautobot-server is not installed (pip install '.[test]' installs the nautobot extra)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` user to run PostgreSQL as"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_pg_user() -> dict[str, str]:
    return {"user": "postgres"} if os.geteuid() == 0 else {}


def _run(cmd: list[str], log: Path, env: dict[str, str] | None = None, **kw: object) -> None:
    with open(log, "ab") as out:
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, check=False, **kw)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}); its output: {log}\n"
                           + log.read_text(errors="replace")[-3000:])


def _spawn(cmd: list[str], log: Path, env: dict[str, str] | None = None, **kw: object) -> int:
    out = open(log, "ab")  # noqa: SIM115 - the process keeps it
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                            stdin=subprocess.DEVNULL, **kw)  # type: ignore[call-overload]
    out.close()
    return int(proc.pid)


def _wait_port(port: int, seconds: float, what: str, log: Path) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {seconds:.0f} s; log: {log}\n"
                       + log.read_text(errors="replace")[-3000:])


def start(workdir: Path) -> Server:
    """Start PostgreSQL, Redis and Nautobot (migrated, with a superuser and a token)."""
    workdir.mkdir(parents=True, exist_ok=True)
    root = workdir / "nautobot"
    root.mkdir(exist_ok=True)
    seconds: dict[str, float] = {}
    pids: list[int] = []
    # PostgreSQL's data outside pytest's temporary tree (owner-only, root's): the postgres
    # user must be able to reach it.
    pgdata = Path(tempfile.mkdtemp(prefix="vlanroute-pg-"))
    state = Server(url="", token="", root=str(root), pgdata=str(pgdata), pids=pids, seconds=seconds)
    (workdir / STATE).write_text(json.dumps(asdict(state)))
    try:
        _start(workdir, root, pgdata, state)
    except BaseException:
        stop(workdir)
        raise
    return state


def _start(workdir: Path, root: Path, pgdata: Path, state: Server) -> None:
    seconds, pids = state.seconds, state.pids
    t = time.monotonic()
    if os.geteuid() == 0:
        pg = pwd.getpwnam("postgres")
        os.chown(pgdata, pg.pw_uid, pg.pw_gid)
    pg_log = root / "postgres.log"
    pg_port = _free_port()
    _run([str(PG_BIN / "initdb"), "-D", str(pgdata / "data"), "-U", "postgres", "--auth=trust",
          "--encoding=UTF8", "--locale=C"], pg_log, cwd="/", **_as_pg_user())
    # fsync off: a test database that is thrown away (migrations run several times faster).
    pids.append(_spawn([str(PG_BIN / "postgres"), "-D", str(pgdata / "data"), "-p", str(pg_port),
                        "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={pgdata}",
                        "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                       pg_log, cwd="/", **_as_pg_user()))
    _save(workdir, state)
    _wait_port(pg_port, 60, "PostgreSQL", pg_log)
    _run([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "postgres", "nautobot"], pg_log)
    seconds["postgresql"] = time.monotonic() - t

    t = time.monotonic()
    redis_port = _free_port()
    redis_log = root / "redis.log"
    pids.append(_spawn(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--daemonize", "no",
                        "--save", "", "--appendonly", "no", "--dir", str(root)], redis_log))
    _save(workdir, state)
    _wait_port(redis_port, 30, "Redis", redis_log)
    seconds["redis"] = time.monotonic() - t

    web_port = _free_port()
    env = dict(os.environ, NAUTOBOT_ROOT=str(root), NAUTOBOT_DB_HOST="127.0.0.1", NAUTOBOT_DB_PORT=str(pg_port),
               NAUTOBOT_DB_USER="postgres", NAUTOBOT_DB_NAME="nautobot", NAUTOBOT_REDIS_HOST="127.0.0.1",
               NAUTOBOT_REDIS_PORT=str(redis_port), NAUTOBOT_ALLOWED_HOSTS="127.0.0.1 localhost",
               NAUTOBOT_SECRET_KEY=secrets.token_hex(32), NAUTOBOT_INSTALLATION_METRICS_ENABLED="false",
               NAUTOBOT_LOG_LEVEL="WARNING")
    for leak in ("NAUTOBOT_URL", "NAUTOBOT_TOKEN"):
        env.pop(leak, None)
    server = _nautobot_server()
    assert server is not None
    config = root / "nautobot_config.py"
    log = root / "nautobot.log"
    t = time.monotonic()
    _run([server, "init", "--disable-installation-metrics", str(config)], log, env=env)
    seconds["init"] = time.monotonic() - t
    t = time.monotonic()
    _run([server, "--config", str(config), "migrate", "--no-input"], log, env=env)
    seconds["migrate"] = time.monotonic() - t

    t = time.monotonic()
    token = secrets.token_hex(20)
    script = ("from django.contrib.auth import get_user_model\n"
              "from nautobot.users.models import Token\n"
              "u = get_user_model().objects.create_superuser('admin', 'admin@example.org', None)\n"
              f"Token.objects.create(user=u, key='{token}')\n")
    _run([server, "--config", str(config), "nbshell", "--command", script], log, env=env)
    seconds["superuser"] = time.monotonic() - t

    t = time.monotonic()
    pids.append(_spawn([server, "--config", str(config), "runserver", "--noreload", "--nothreading",
                        f"127.0.0.1:{web_port}"], log, env=env, cwd=str(root)))
    _save(workdir, state)
    state.url = f"http://127.0.0.1:{web_port}"
    state.token = token
    _wait_api(state.url, token, 180, log)
    seconds["runserver"] = time.monotonic() - t
    _save(workdir, state)


def _wait_api(url: str, token: str, seconds: float, log: Path) -> None:
    end = time.monotonic() + seconds
    last = ""
    while time.monotonic() < end:
        request = urllib.request.Request(f"{url}/api/status/", headers={"Authorization": f"Token {token}",
                                                                        "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        time.sleep(0.5)
    raise RuntimeError(f"Nautobot did not answer {url}/api/status/ within {seconds:.0f} s ({last}); log: {log}\n"
                       + log.read_text(errors="replace")[-3000:])


def _save(workdir: Path, state: Server) -> None:
    (workdir / STATE).write_text(json.dumps(asdict(state)))


def load(workdir: Path) -> Server | None:
    path = workdir / STATE
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    return Server(**data)


def stop(workdir: Path) -> None:
    """Stop every process start() began (last first) and remove PostgreSQL's data."""
    state = load(workdir)
    if state is None:
        return
    for pid in reversed(state.pids):
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        end = time.monotonic() + 20
        while time.monotonic() < end:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(pid, os.WNOHANG)       # reap it if this process started it
        except ChildProcessError:
            pass
    shutil.rmtree(state.pgdata, ignore_errors=True)
    (workdir / STATE).unlink()


if __name__ == "__main__":          # python tests/nautobot_server.py DIR: start, print, wait for ^C
    where = Path(sys.argv[1])
    s = start(where)
    print(json.dumps(asdict(s), indent=1), flush=True)
    try:
        signal.pause()
    finally:
        stop(where)
