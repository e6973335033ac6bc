#!/usr/bin/env python3
"""Time three peer music-library scanners importing the same folder of audio files.

The peers are the Python libraries a user would otherwise point at their music: supysonic
(`supysonic-cli folder scan`), beets (`beet import -A`, tags taken as they are) and musickit
(`musickit library index rebuild`). Each one is installed on demand into its own venv under
the repository's `.venv/` and scans DIR into a fresh database under WORK/PEER/, so the
figures can be set beside Shelf's own import of the same folder.

    python3 scripts/import_peers.py --music DIR --work DIR \
        [--peers supysonic,beets,musickit] [--runs cold,warm] [--timeout SECONDS]

For every peer and run kind one JSON object is printed on stdout:

    peer, run        the peer's name; "cold" or "warm"
    cold             true only when the page cache was really dropped before this run
    files            audio files in DIR (by extension, see AUDIO_EXTS)
    imported         tracks in the peer's database after the run (null if there is none)
    seconds          wall time of the timed command
    cpuSeconds       user + system CPU of the command and every descendant it reaped
    readBytes        bytes the command's process tree read from the block device
    peakRSSBytes     largest resident set of any single process of the tree
    version          the peer's installed version
    error            null, or why the peer could not be installed or the run failed

"cold": `sync`, then 3 is written to /proc/sys/vm/drop_caches just before the timed command,
so the music, the peer's Python code and the interpreter all come from disk. "warm": a run
into a fresh database with all of that already cached (an untimed run comes first if no
earlier run of the same peer has warmed the cache). Each run starts from an empty WORK/PEER/.
Human-readable progress goes to stderr; the peers' own output goes to WORK/logs/.

Only the standard library is used here; the peers run in their own interpreters.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

AUDIO_EXTS = {".mp3", ".flac", ".ogg", ".opus", ".m4a", ".mp4", ".aac", ".wav", ".aif", ".aiff", ".wv", ".ape"}

# The venvs live beside the project's other tools, found from this file rather than the
# cwd so the script can be run from anywhere.
VENVS = Path(__file__).resolve().parent.parent / ".venv"

RUN_KINDS = ("cold", "warm")


class SetupError(Exception):
    """A peer could not be installed or prepared; reported in its JSON lines, not fatal."""


# ---------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------


class Peer:
    """What the harness needs to know to install one peer and run its import."""

    name = ""
    package = ""           # the PyPI distribution to install
    module = ""            # imported to tell whether the install is usable
    venv = VENVS
    min_python = (3, 9)
    track_table = ""       # the table of the peer's database with one row per track

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def db(self, state: Path) -> Path:
        raise NotImplementedError

    def prepare(self, state: Path, music: Path, env: dict, logs: Path, timeout: float) -> None:
        """Write the peer's configuration and do any untimed set-up in an empty `state`."""

    def env(self, state: Path) -> dict:
        return {}

    def command(self, state: Path, music: Path) -> list[str]:
        raise NotImplementedError


class Supysonic(Peer):
    name = package = module = "supysonic"
    venv = VENVS  # the project's main venv, which already has mutagen
    track_table = "track"

    def db(self, state):
        return state / "supysonic.db"

    def prepare(self, state, music, env, logs, timeout):
        # supysonic's IniConfig reads /etc/supysonic, ~/.supysonic,
        # ~/.config/supysonic/supysonic.conf and then ./supysonic.conf, later files winning;
        # the run's cwd is `state` and HOME points into it (see run_env), so this file is
        # the only one it finds.
        (state / "supysonic.conf").write_text(
            "[base]\n"
            f"database_uri = sqlite:///{self.db(state)}\n"
            "[webapp]\n"
            f"cache_dir = {state / 'cache'}\n"
            "mount_webui = no\n"
            "log_level = ERROR\n"
            "[daemon]\n"
            f"socket = {state / 'daemon.sock'}\n"
            "run_watcher = no\n"
        )
        # Registering the folder only writes one row; it is not part of the import.
        run_quiet([str(self.venv / "bin" / "supysonic-cli"), "folder", "add", "music", str(music)],
                  cwd=state, env=env, log=logs, timeout=timeout, what="supysonic-cli folder add")

    def command(self, state, music):
        # --foreground: scan in this process rather than asking a daemon (none runs).
        return [str(self.venv / "bin" / "supysonic-cli"), "folder", "scan", "--foreground", "music"]


class Beets(Peer):
    name = package = module = "beets"
    venv = VENVS / "beets"
    track_table = "items"

    def db(self, state):
        return state / "library.db"

    def prepare(self, state, music, env, logs, timeout):
        (state / "lib").mkdir()
        # JSON strings are valid YAML scalars, so paths need no further quoting.
        # duplicate_action: keep, because in quiet mode beets otherwise *skips* an album whose
        # artist and title match one already imported (the same album in two formats, say),
        # which would make it import less than the others rather than work less.
        (state / "config.yaml").write_text(
            f"directory: {json.dumps(str(state / 'lib'))}\n"
            f"library: {json.dumps(str(self.db(state)))}\n"
            "plugins: []\n"
            "import:\n"
            "  write: no\n"
            "  copy: no\n"
            "  move: no\n"
            "  autotag: no\n"
            "  quiet: yes\n"
            "  log: null\n"
            "  duplicate_action: keep\n"
        )
        # Opening a new library creates its schema and runs beets' migrations, each of which
        # first backs the database up. That is a one-off of a brand-new library, not import
        # work, so it is done here, untimed, just as supysonic's schema is created by its
        # `folder add`. The library is still empty.
        run_quiet([str(self.venv / "bin" / "beet"), "stats"], cwd=state, env=env, log=logs,
                  timeout=timeout, what="beet stats")

    def env(self, state):
        return {"BEETSDIR": str(state)}

    def command(self, state, music):
        # -A: no autotagger (no MusicBrainz look-ups), files are imported with their own tags.
        return [str(self.venv / "bin" / "beet"), "import", "-A", "-q", str(music)]


# musickit keeps its index at <library root>/.musickit/index.db with no option to move it.
# To leave the music folder untouched (it may be read-only, and a database inside it would
# also be walked by the other peers), this runner points musickit's one path helper at
# WORK/musickit/index.db and then runs the real CLI: the scan, audit and database writes
# are musickit's own code, unchanged.
MUSICKIT_RUNNER = """\
import sys
from pathlib import Path
import musickit.library as library
import musickit.library.db as db
target = Path(sys.argv[1])
db.db_path = library.db_path = lambda root: target
sys.argv = ["musickit"] + sys.argv[2:]
from musickit.cli import app
sys.exit(app())
"""


class Musickit(Peer):
    name = package = module = "musickit"
    venv = VENVS / "musickit"
    min_python = (3, 13)  # every musickit release on PyPI declares Requires-Python >= 3.13
    track_table = "tracks"

    def db(self, state):
        return state / "index.db"

    def command(self, state, music):
        # `library index rebuild` is musickit's full library scan (walk, tag read, audit,
        # write every row); `tree`, `audit` and `serve` all go through the same code.
        return [str(self.python), "-c", MUSICKIT_RUNNER, str(self.db(state)),
                "library", "index", "rebuild", str(music)]


PEERS = {peer.name: peer for peer in (Supysonic(), Beets(), Musickit())}


# ---------------------------------------------------------------------------
# Installing
# ---------------------------------------------------------------------------


def python_version(python: str | Path) -> tuple[int, int] | None:
    try:
        out = subprocess.run([str(python), "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        major, minor = out.split()
        return int(major), int(minor)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def find_interpreter(minimum: tuple[int, int]) -> str | None:
    """An interpreter new enough for a peer: this one, a python3.N on PATH, or a pyenv build."""
    candidates = [sys.executable]
    candidates += [shutil.which(f"python3.{minor}") for minor in range(20, minimum[1] - 1, -1)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")),
                         key=lambda p: [int(n) for n in re.findall(r"\d+", p.split("/versions/")[-1])],
                         reverse=True)
    for candidate in candidates:
        if candidate and (version := python_version(candidate)) and version >= minimum:
            return candidate
    return None


def importable(python: Path, module: str) -> bool:
    return subprocess.run([str(python), "-c", f"import {module}"], capture_output=True, timeout=300).returncode == 0


def ensure_installed(peer: Peer, log: Path) -> None:
    """Create the peer's venv if it has none and pip-install the peer if it does not import."""
    want = ".".join(map(str, peer.min_python))
    if not peer.python.exists():
        interpreter = find_interpreter(peer.min_python)
        if interpreter is None:
            raise SetupError(f"{peer.package} needs Python >= {want}; none found on PATH or in ~/.pyenv")
        print(f"{peer.name}: creating {peer.venv} with {interpreter}", file=sys.stderr, flush=True)
        run_quiet([interpreter, "-m", "venv", str(peer.venv)], log=log, timeout=600, what="python -m venv")
    have = python_version(peer.python)
    if have is None or have < peer.min_python:
        # Never cleared here: the supysonic venv is the project's main one and holds the others.
        raise SetupError(f"{peer.venv} has Python {have and '.'.join(map(str, have))} but {peer.package} "
                         f"needs >= {want}; remove that venv to have it recreated")
    if importable(peer.python, peer.module):
        return
    print(f"{peer.name}: pip install {peer.package} into {peer.venv}", file=sys.stderr, flush=True)
    run_quiet([str(peer.python), "-m", "pip", "install", "--disable-pip-version-check", peer.package],
              log=log, timeout=1800, what=f"pip install {peer.package}")
    if not importable(peer.python, peer.module):
        raise SetupError(f"{peer.package} installed but `import {peer.module}` fails (see {log})")


def installed_version(peer: Peer) -> str | None:
    out = subprocess.run([str(peer.python), "-c",
                          f"import importlib.metadata as m; print(m.version({peer.package!r}))"],
                         capture_output=True, text=True, timeout=120)
    return out.stdout.strip() or None


def run_quiet(cmd: list[str], *, log: Path, timeout: float, what: str, cwd: Path | None = None,
              env: dict | None = None) -> None:
    """Run an untimed step, its output appended to `log`; SetupError with pip's or the tool's reason."""
    with open(log, "ab") as out:
        out.write(f"$ {' '.join(cmd)}\n".encode())
        out.flush()
        try:
            code = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            raise SetupError(f"{what} timed out after {timeout:g} s") from None
        except OSError as error:
            raise SetupError(f"{what}: {error}") from None
    if code != 0:
        raise SetupError(f"{what} failed (exit {code}): {last_error_line(log)}")


def last_error_line(log: Path) -> str:
    """The most telling line of a failed step's output: pip's last ERROR line, else the last line."""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1][:500]


# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------


def self_read_bytes() -> int | None:
    try:
        with open("/proc/self/io") as io:
            for line in io:
                if line.startswith("read_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def drop_caches() -> str | None:
    """Empty the page cache (needs root); the reason it failed, or None."""
    os.sync()  # dirty pages cannot be dropped, so write them out first
    try:
        with open("/proc/sys/vm/drop_caches", "w") as control:
            control.write("3\n")
        return None
    except OSError as error:
        return str(error)


def measure(cmd: list[str], *, cwd: Path, env: dict, timeout: float, log: Path) -> dict:
    """Run one timed peer command and return what it cost.

    CPU: the delta of getrusage(RUSAGE_CHILDREN) around the wait, which is on this child
    alone (nothing else runs meanwhile), so it is the child's CPU plus that of every
    descendant it reaped.

    Disk reads: the delta of this process's own /proc/self/io read_bytes around the wait.
    When a process is reaped the kernel adds its I/O counters (including those it had
    gathered from its own reaped children) to the parent's, exactly as it does for CPU. So
    after the wait this covers the whole tree, with none of the gaps of the alternatives:
    polling /proc/PID/io misses whatever a short-lived process read after the last sample
    (and exited children vanish from /proc), and an in-process atexit wrapper never runs
    when the peer is killed at the timeout or leaves through os._exit. This process itself
    reads nothing from disk while it waits.

    Peak RSS: from the wait4 rusage of this very child, i.e. the largest of the child and
    its reaped descendants. RUSAGE_CHILDREN's ru_maxrss cannot be used: it is a running
    maximum over every child ever reaped, so a second, smaller run would repeat the first.
    """
    with open(log.with_suffix(".out"), "wb") as out, open(log.with_suffix(".err"), "wb") as err:
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        io_before = self_read_bytes()
        start = time.monotonic()
        # A session of its own so that a timeout kills the whole tree, not just the top.
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        # A timer rather than polling, so the wall time is exact and nothing here wakes up.
        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait
        io_after = self_read_bytes()
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)

    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    error = None
    if timed_out.is_set():
        error = f"timed out after {timeout:g} s"
    elif proc.returncode != 0:
        error = f"exit status {proc.returncode}: {last_error_line(log.with_suffix('.err'))}"
    return {
        "seconds": round(seconds, 3),
        "cpuSeconds": round(cpu, 3),
        "readBytes": None if io_before is None or io_after is None else io_after - io_before,
        "peakRSSBytes": usage.ru_maxrss * 1024,  # Linux reports KiB
        "error": error,
    }


def count_tracks(db: Path, table: str) -> int | None:
    if not db.exists():  # connecting would create it
        return None
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        return None


def count_audio(music: Path) -> int:
    return sum(1 for _, _, names in os.walk(music) for name in names
               if os.path.splitext(name)[1].lower() in AUDIO_EXTS)


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


def fresh_state(work: Path, peer: Peer) -> Path:
    state = work / peer.name
    if state.exists():
        shutil.rmtree(state)
    (state / "home").mkdir(parents=True)
    return state


def run_env(peer: Peer, state: Path) -> dict:
    """The environment of a peer's commands.

    HOME and the XDG directories point into the run's empty state so that no peer reads a
    configuration or library the user already has (~/.config/beets, ~/.supysonic,
    ~/.config/musickit) or leaves one behind: every run starts from nothing.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    home = state / "home"
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_DATA_HOME=str(home / ".local/share"))
    env.update(peer.env(state))
    return env


def prepare_run(peer: Peer, music: Path, work: Path, logs: Path, timeout: float, tag: str) -> tuple[Path, dict]:
    """Empty the peer's state and do its untimed set-up; the state folder and environment to run in."""
    state = fresh_state(work, peer)
    env = run_env(peer, state)
    log = logs / f"{peer.name}-{tag}.setup.log"
    log.unlink(missing_ok=True)  # run_quiet appends, and only this run's set-up belongs here
    peer.prepare(state, music, env, log, timeout)
    return state, env


def run_peer(peer: Peer, runs: list[str], music: Path, work: Path, logs: Path, timeout: float, files: int) -> None:
    def emit(run, cold=False, imported=None, numbers=None, version=None, error=None):
        numbers = numbers or {}
        line = {"peer": peer.name, "run": run, "cold": cold, "files": files, "imported": imported,
                "seconds": numbers.get("seconds"), "cpuSeconds": numbers.get("cpuSeconds"),
                "readBytes": numbers.get("readBytes"), "peakRSSBytes": numbers.get("peakRSSBytes"),
                "version": version, "error": error or numbers.get("error")}
        print(json.dumps(line), flush=True)

    try:
        ensure_installed(peer, logs / f"{peer.name}-install.log")
        version = installed_version(peer)
    except (SetupError, OSError, subprocess.SubprocessError) as error:
        print(f"{peer.name}: cannot run: {error}", file=sys.stderr, flush=True)
        for run in runs:
            emit(run, error=str(error))
        return

    warmed = False  # whether an earlier completed run of this peer has filled the page cache
    for run in runs:
        cold = False
        try:
            if run == "warm" and not warmed:
                # Nothing has read the music or loaded the peer yet: an untimed run does.
                state, env = prepare_run(peer, music, work, logs, timeout, "prime")
                measure(peer.command(state, music), cwd=state, env=env, timeout=timeout,
                        log=logs / f"{peer.name}-prime.log")
            state, env = prepare_run(peer, music, work, logs, timeout, run)
            if run == "cold":
                # Dropped after the untimed set-up so that it warms nothing the run needs.
                reason = drop_caches()
                cold = reason is None
                if reason:
                    print(f"{peer.name}: could not drop the page cache ({reason}); this run is not cold",
                          file=sys.stderr, flush=True)
            numbers = measure(peer.command(state, music), cwd=state, env=env, timeout=timeout,
                              log=logs / f"{peer.name}-{run}.log")
        except (SetupError, OSError, subprocess.SubprocessError) as error:
            print(f"{peer.name} {run}: {error}", file=sys.stderr, flush=True)
            emit(run, cold=cold, version=version, error=str(error))
            continue
        imported = count_tracks(peer.db(state), peer.track_table)
        warmed = warmed or numbers["error"] is None
        emit(run, cold=cold, imported=imported, numbers=numbers, version=version)
        print(f"{peer.name} {version} {run}{'' if run == 'warm' or cold else ' (cache not dropped)'}: "
              f"{'?' if imported is None else imported}/{files} tracks in {numbers['seconds']:.2f} s, cpu {numbers['cpuSeconds']:.2f} s, "
              f"read {mib(numbers['readBytes'])}, peak RSS {mib(numbers['peakRSSBytes'])}"
              + (f" — {numbers['error']}" if numbers["error"] else ""), file=sys.stderr, flush=True)


def mib(n: int | None) -> str:
    return "?" if n is None else f"{n / 2**20:.1f} MiB"


def inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--music", required=True, type=Path, help="folder of audio files to import")
    parser.add_argument("--work", required=True, type=Path,
                        help="scratch folder; WORK/PEER/ is emptied before every run, logs go to WORK/logs/")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated, from: " + ", ".join(PEERS))
    parser.add_argument("--runs", default=",".join(RUN_KINDS), help="comma-separated, from: cold, warm")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds allowed for each run (default 3600)")
    args = parser.parse_args()

    peers = [name.strip() for name in args.peers.split(",") if name.strip()]
    runs = {name.strip() for name in args.runs.split(",") if name.strip()}
    if unknown := [name for name in peers if name not in PEERS]:
        parser.error(f"unknown peer(s): {', '.join(unknown)}")
    if unknown := runs - set(RUN_KINDS):
        parser.error(f"unknown run kind(s): {', '.join(sorted(unknown))}")
    runs = [kind for kind in RUN_KINDS if kind in runs]  # cold first: "warm" is the second run
    music, work = args.music.resolve(), args.work.resolve()
    if not music.is_dir():
        parser.error(f"{music} is not a folder")
    # WORK/PEER is deleted before each run, and a database inside the music would be scanned.
    if inside(music, work) or inside(work, music):
        parser.error("--music and --work must not contain one another")
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)

    files = count_audio(music)
    print(f"{files} audio files in {music}; peers {', '.join(peers)}; runs {', '.join(runs)}",
          file=sys.stderr, flush=True)
    for name in peers:
        run_peer(PEERS[name], runs, music, work, logs, args.timeout, files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
