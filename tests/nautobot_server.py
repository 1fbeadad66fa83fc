"""A real Nautobot server on loopback for the tests (tests/test_nautobot.py): PostgreSQL and
Redis from Debian, Nautobot from PyPI (the `nautobot` extra), each on its own port on
127.0.0.1, with its own data under a temporary directory.

`start(workdir)` initialises PostgreSQL (initdb), starts it and Redis, writes Nautobot's
configuration (`nautobot-server init`), builds the database, makes a superuser with an API
token and starts `nautobot-server runserver`; `stop(workdir)` stops them all and removes the
data.

The database: `nautobot-server migrate` on an empty database takes minutes (160-570 s on the
2-core machine, CPU-bound), so a dump of a freshly migrated database of the installed Nautobot
version is restored first (tests/fixtures/nautobot/nautobot-VERSION.sql.gz, written by
`python tests/nautobot_server.py --write-dump`), and `migrate` still runs on it: it applies
nothing when the dump is the installed version's and only the newer migrations when it is an
older 2.4.x's, so the database is always what Nautobot's own migrations build. Without a dump
of the same minor release the full migration runs, and `Server.database` says so. A dump of the
database test_nautobot.py fills (`write_filled_dump`) is restored instead where start() is
given one (`choose_filled`: the installed version's, of the current fill key). The processes run in sessions of their own, so that the pytest-xdist worker that
started them can end before the others are done (tests/conftest.py stops them once the
whole run is over). `missing()` says why a server cannot start here (the tests then skip).

PostgreSQL refuses to run as root: as root, its programs run as the `postgres` user that
Debian's package creates, with its data in a directory of that user's own.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import os
import pwd
import re
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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any



def _pg_bin() -> Path:
    """Debian's PostgreSQL programs (/usr/lib/postgresql/VERSION/bin, 15 on Debian 12): the newest."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name)
                   if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()
STATE = "nautobot-server.json"
DUMPS = Path(__file__).resolve().parent / "fixtures" / "nautobot"
_DUMP_NAME = re.compile(r"nautobot-(\d+)\.(\d+)\.(\d+)\.sql\.gz")
# The dump's first line names the version that migrated it (checked by tests/test_nautobot_dump.py).
VERSION_LINE = "-- nautobot-version: "


@dataclass
class Server:
    url: str
    token: str
    root: str                # NAUTOBOT_ROOT and the logs
    pgdata: str              # PostgreSQL's data (its own directory: owned by postgres when root)
    pids: list[int]          # the process groups to stop, last started first
    seconds: dict[str, float]   # what each start-up step took
    database: str = ""       # how the database was built: the dump restored, or the full migration
    pg_port: int = 0

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


def nautobot_version() -> str | None:
    """The installed Nautobot's version (the one `nautobot-server` runs), or None."""
    try:
        return importlib.metadata.version("nautobot")
    except importlib.metadata.PackageNotFoundError:
        return None


def dump_path(version: str, directory: Path = DUMPS) -> Path:
    return directory / f"nautobot-{version}.sql.gz"


def _release(version: str) -> tuple[int, int, int] | None:
    found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def _shown(directory: Path) -> Path:
    """`directory` as the messages name it: relative to the repository when inside it."""
    repo = Path(__file__).resolve().parent.parent
    return directory.relative_to(repo) if directory.is_relative_to(repo) else directory


def choose_dump(version: str | None, directory: Path = DUMPS) -> tuple[Path | None, str]:
    """The dump to restore before `migrate` for Nautobot `version`, and a sentence for the
    server's log: the version's own dump; else the newest dump of an older release of the same
    minor version (`migrate` then applies the newer migrations, as an upgrade would); else None
    (the full migration). A newer release's dump is never used: its tables may hold columns
    the installed Nautobot does not know."""
    where = _shown(directory)
    release = _release(version) if version else None
    if version is None or release is None:
        return None, f"Nautobot's version is unknown ({version!r}): the full migration, no dump restored"
    exact = dump_path(version, directory)
    if exact.exists():
        return exact, f"restored {where / exact.name} (Nautobot {version}, the installed version), then migrate"
    older = []
    for path in directory.glob("nautobot-*.sql.gz"):
        found = _DUMP_NAME.fullmatch(path.name)
        if found:
            other = (int(found[1]), int(found[2]), int(found[3]))
            if other[:2] == release[:2] and other < release:
                older.append((other, path))
    if older:
        other, path = max(older)
        return path, (f"no dump for Nautobot {version} in {where}: restored the dump of {'.'.join(map(str, other))} "
                      f"({path.name}), then migrate applies the newer migrations")
    return None, (f"no dump for Nautobot {version} (nor an older {release[0]}.{release[1]}.x) in {where}: the full "
                  "migration (minutes; `python tests/nautobot_server.py --write-dump` writes the dump)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_pg_user() -> dict[str, Any]:      # subprocess's `user`
    return {"user": "postgres"} if os.geteuid() == 0 else {}


def _run(cmd: list[str], log: Path, env: dict[str, str] | None = None, **kw: object) -> str:
    """Run `cmd` with its output appended to `log`; that output."""
    with open(log, "ab") as out:
        before = out.tell()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, check=False, **kw)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}); its output: {log}\n"
                           + log.read_text(errors="replace")[-3000:])
    with open(log, "rb") as again:
        again.seek(before)
        return again.read().decode(errors="replace")


def _note(log: Path, text: str) -> None:
    with open(log, "a") as out:
        out.write(f"[tests/nautobot_server.py] {text}\n")


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


def start(workdir: Path, *, dump: bool = True, serve: bool = True, filled: tuple[Path, str] | None = None) -> Server:
    """Start PostgreSQL, Redis and Nautobot (migrated, with a superuser and a token).
    `dump=False`: the full migration whatever dump there is; `serve=False`: only the migrated
    database (and Redis), no superuser and no web server (what --write-dump needs);
    `filled`: a dump of a filled database of the installed version (`write_filled_dump`) and a
    sentence for the log, restored instead of the migrated one."""
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
        _start(workdir, root, pgdata, state, dump=dump, serve=serve, filled=filled)
    except BaseException:
        stop(workdir)
        raise
    return state


def _pg(tool: str, port: int) -> list[str]:
    return [str(PG_BIN / tool), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]


def _restore(dump: Path, port: int, log: Path) -> None:
    """Load a plain-SQL dump into the empty database `nautobot` (stop at the first error)."""
    with open(log, "ab") as out:
        done = subprocess.run([*_pg("psql", port), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", "nautobot", "-f", "-"],
                              input=gzip.decompress(dump.read_bytes()), stdout=subprocess.DEVNULL, stderr=out,
                              check=False)
    if done.returncode != 0:
        raise RuntimeError(f"psql could not load it (exit code {done.returncode}; its errors: {log})")


def _start(workdir: Path, root: Path, pgdata: Path, state: Server, *, dump: bool, serve: bool,
           filled: tuple[Path, str] | None) -> None:
    seconds, pids = state.seconds, state.pids
    t = time.monotonic()
    if os.geteuid() == 0:
        pg = pwd.getpwnam("postgres")
        os.chown(pgdata, pg.pw_uid, pg.pw_gid)
    pg_log = root / "postgres.log"
    pg_port = state.pg_port = _free_port()
    _run([str(PG_BIN / "initdb"), "-D", str(pgdata / "data"), "-U", "postgres", "--auth=trust",
          "--encoding=UTF8", "--locale=C"], pg_log, cwd="/", **_as_pg_user())
    # fsync off: a test database that is thrown away (migrations run several times faster).
    pids.append(_spawn([str(PG_BIN / "postgres"), "-D", str(pgdata / "data"), "-p", str(pg_port),
                        "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={pgdata}",
                        "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                       pg_log, cwd="/", **_as_pg_user()))
    _save(workdir, state)
    _wait_port(pg_port, 60, "PostgreSQL", pg_log)
    _run([*_pg("createdb", pg_port), "nautobot"], pg_log)
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

    if filled is not None:
        chosen, state.database = filled
    else:
        chosen, state.database = choose_dump(nautobot_version()) if dump else (None, "the full migration (asked for)")
    if chosen is not None:
        t = time.monotonic()
        try:
            _restore(chosen, pg_port, log)
        except RuntimeError as exc:
            # A dump psql cannot load (a psql older than the pg_dump that wrote it): start
            # again from an empty database, as if there were none.
            state.database += f"; but {exc}, so the full migration on an empty database"
            _run([*_pg("dropdb", pg_port), "nautobot"], pg_log)
            _run([*_pg("createdb", pg_port), "nautobot"], pg_log)
        seconds["restore"] = time.monotonic() - t
    _note(log, state.database)
    t = time.monotonic()
    out = _run([server, "--config", str(config), "migrate", "--no-input"], log, env=env)
    seconds["migrate"] = time.monotonic() - t
    applied = len(re.findall(r"^\s*Applying ", out, flags=re.MULTILINE))
    state.database += f"; migrate applied {applied} migration(s)"
    _note(log, state.database)
    _save(workdir, state)
    if not serve:
        return

    # The web server starts while the superuser is made (two Django start-ups at once on two
    # cores); the API answers the token only once both are done.
    t = time.monotonic()
    pids.append(_spawn([server, "--config", str(config), "runserver", "--noreload", "--nothreading",
                        "--skip-checks", f"127.0.0.1:{web_port}"], log, env=env, cwd=str(root)))
    _save(workdir, state)
    token = secrets.token_hex(20)
    script = ("from django.contrib.auth import get_user_model\n"
              "from nautobot.users.models import Token\n"
              "User = get_user_model()\n"
              "u = User.objects.filter(username='admin').first()\n"      # a filled dump has it already
              "u = u or User.objects.create_superuser('admin', 'admin@example.org', None)\n"
              f"Token.objects.create(user=u, key='{token}')\n")
    _run([server, "--config", str(config), "nbshell", "--command", script], log, env=env)
    seconds["superuser"] = time.monotonic() - t
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


def _running(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs. A zombie does not, though kill() still
    finds it until its parent reaps it (this process, when it started the servers: waiting
    for its zombies took 20 s per server)."""
    try:
        os.waitpid(pgid, os.WNOHANG)      # reap the group's leader if this process started it
    except ChildProcessError:
        pass
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    if not Path("/proc/self/stat").exists():
        return True
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError, ValueError):
            continue                      # ended while read
        if int(group) == pgid and state not in ("Z", "X"):
            return True
    return False


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
            if not _running(pid):
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


def write_dump(workdir: Path, directory: Path = DUMPS) -> Path:
    """Migrate an empty database with the installed Nautobot and write it as
    `directory`/nautobot-VERSION.sql.gz: plain SQL from pg_dump --no-owner --no-privileges,
    gzip -9, its first lines naming the versions that made it."""
    version = nautobot_version()
    if version is None or _release(version) is None:
        raise RuntimeError(f"Nautobot's version is unknown ({version!r}): install the `nautobot-server` extra")
    state = start(workdir, dump=False, serve=False)
    try:
        sql = subprocess.run([*_pg("pg_dump", state.pg_port), "--no-owner", "--no-privileges", "nautobot"],
                             capture_output=True, check=True).stdout
        pg = subprocess.run([str(PG_BIN / "pg_dump"), "--version"], capture_output=True, text=True,
                            check=True).stdout.strip()
    finally:
        stop(workdir)
    header = (f"{VERSION_LINE}{version}\n"
              f"-- A freshly migrated Nautobot {version} database: `nautobot-server migrate` on an empty one\n"
              f"-- ({state.seconds['migrate']:.0f} s here), then pg_dump --no-owner --no-privileges ({pg}).\n"
              "-- Written by `python tests/nautobot_server.py --write-dump`; restored by start() before\n"
              "-- `migrate` (tests/nautobot_server.py).\n")
    return _write_gz(dump_path(version, directory), header.encode() + sql)


def _write_gz(path: Path, data: bytes) -> Path:
    """`data` as `path`, gzip -9n (mtime=0, no name: the same bytes for the same SQL), written
    beside it first and renamed, so a dump is never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(data)
    partial.replace(path)
    return path


# A dump of the database filled as tests/test_nautobot.py fills it (its first lines: the version
# and the fill key, a hash of everything the fill depends on). Filling through the REST API took
# 110-145 s of the server's CPU on the 2-core machine (the seed's 249 cables at about 0.35 s each:
# 85 s), about a minute of the whole suite; restoring takes a second.
FILL_KEY_LINE = "-- fill-key: "
# Not kept in a committed file: API tokens and web sessions (start() makes a fresh token), and the
# change log of the fill (no test reads it; it is most of the dump).
UNDUMPED = ("users_token", "django_session", "extras_objectchange")


def filled_path(version: str, directory: Path = DUMPS) -> Path:
    return directory / f"filled-{version}.sql.gz"


def dump_header(path: Path) -> dict[str, str]:
    """The `-- name: value` lines at the start of a dump (nautobot-version, fill-key)."""
    out: dict[str, str] = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            if not line.startswith("-- ") or ": " not in line:
                break
            name, _, value = line[3:].rstrip("\n").partition(": ")
            out[name] = value
    return out


def choose_filled(version: str | None, key: str, directory: Path = DUMPS) -> tuple[tuple[Path, str] | None, str]:
    """The filled dump to restore for Nautobot `version` and the fill `key` (with the sentence
    start() logs), or None and why the fill runs through the API instead. Only the exact
    version's dump, of the same key: any other would hold another fill."""
    where = _shown(directory)
    if version is None or _release(version) is None:
        return None, f"Nautobot's version is unknown ({version!r}): filled through the API"
    path = filled_path(version, directory)
    if not path.exists():
        return None, (f"no filled dump for Nautobot {version} in {where}: filled through the API "
                      "(`python tests/nautobot_filled_dump.py` writes one)")
    header = dump_header(path)
    if header.get("nautobot-version") != version or header.get("fill-key") != key:
        return None, (f"{where / path.name} holds another fill (key {header.get('fill-key')!r}, now {key!r}): "
                      "filled through the API (`python tests/nautobot_filled_dump.py` writes it again)")
    said = f"restored {where / path.name} (Nautobot {version}, filled through its API when written), then migrate"
    return (path, said), said


def write_filled_dump(workdir: Path, key: str, fill: Callable[[Server], None], directory: Path = DUMPS) -> Path:
    """Start a server as the tests do (the migrated dump restored), `fill` it, and write its
    database as `directory`/filled-VERSION.sql.gz, headed by the version and `key`, without
    the tables of UNDUMPED."""
    version = nautobot_version()
    if version is None or _release(version) is None:
        raise RuntimeError(f"Nautobot's version is unknown ({version!r}): install the `nautobot-server` extra")
    state = start(workdir)
    try:
        t = time.monotonic()
        fill(state)
        filling = time.monotonic() - t
        sql = subprocess.run([*_pg("pg_dump", state.pg_port), "--no-owner", "--no-privileges",
                              *(f"--exclude-table-data={table}" for table in UNDUMPED), "nautobot"],
                             capture_output=True, check=True).stdout
    finally:
        stop(workdir)
    header = (f"{VERSION_LINE}{version}\n{FILL_KEY_LINE}{key}\n"
              f"-- The database of tests/test_nautobot.py: Nautobot {version} filled through its REST API\n"
              f"-- ({filling:.0f} s here), then pg_dump --no-owner --no-privileges without the data of\n"
              f"-- {', '.join(UNDUMPED)}. Written by `python tests/nautobot_filled_dump.py`;\n"
              "-- restored by start() instead of the migrated dump when the fill key is the same.\n")
    return _write_gz(filled_path(version, directory), header.encode() + sql)


if __name__ == "__main__":
    # python tests/nautobot_server.py DIR: start, print, wait for ^C.
    # python tests/nautobot_server.py --write-dump [DIR]: write the installed version's dump.
    if sys.argv[1:2] == ["--write-dump"]:
        work = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="vlanroute-nautobot-dump-"))
        written = write_dump(work)
        print(f"{written} ({written.stat().st_size} bytes)")
        sys.exit(0)
    where = Path(sys.argv[1])
    s = start(where)
    print(json.dumps(asdict(s), indent=1), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))     # `kill` stops the servers too
    try:
        signal.pause()
    finally:
        stop(where)
