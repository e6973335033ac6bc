"""What the scripted end-to-end checks share: one line per check (`ok   NAME` or `FAIL NAME: why`,
which the Swift tests look for), free loopback ports, and waits for a condition bounded only
against a hang (never a sleep standing in for one)."""

import signal
import socket
import subprocess
import tempfile
import time
import traceback

HANG = 90  # seconds: a bound for a hung program, not a synchronization
failures = []


def check(name, body, *args):
    """Runs one check; a failure is printed with where it failed, and the rest still run."""
    try:
        body(*args)
        print(f"ok   {name}", flush=True)
    except Exception as error:  # noqa: BLE001 (any failure of a check is reported)
        failures.append(name)
        print(f"FAIL {name}: {error}", flush=True)
        print("".join(traceback.format_tb(error.__traceback__)[-3:]), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what, condition):
    """The first truthy value of `condition`, asked every 50 ms."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class ShelfServe:
    """`shelf serve` on a loopback port it picks itself (read back from its log), with its log kept
    in a file: what the scripted checks that need a real server start and stop."""

    def serve(self, shelf, library, env, args=()):
        """Starts the server and waits until it says where it listens (`port`, `base`)."""
        self.log = tempfile.NamedTemporaryFile(prefix="shelf-serve-", suffix=".log", delete=False)
        self.process = subprocess.Popen([shelf, "--library", library, "serve", "--listen", "127.0.0.1:0", *args],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log, env=env)

        def serving():
            if self.process.poll() is not None:
                raise RuntimeError(f"shelf serve exited: {self.text()[-2000:]}")
            for line in self.text().splitlines():
                if " on http://127.0.0.1:" in line and "serving" in line:
                    return int(line.rsplit(":", 1)[1])
            return None

        self.port = wait_until("shelf serve to listen", serving)
        self.base = f"http://127.0.0.1:{self.port}"

    def text(self):
        """The server's log so far."""
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def stop(self):
        """SIGTERM, then the exit (bounded against a hang)."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(HANG)
