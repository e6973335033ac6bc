"""What the scripted end-to-end checks share: one line per check (`ok   NAME` or `FAIL NAME: why`,
which the Swift tests look for), free loopback ports, and waits for a condition bounded only
against a hang (never a sleep standing in for one)."""

import socket
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
