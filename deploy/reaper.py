"""Deploy, the launcher's watchdog: tasks die with their launcher, however it dies.

`python -m deploy.reaper [DIR ...]` is the first child a LocalCluster starts, with a pipe
from the launcher as its stdin. The launcher writes "pid N" for every task it starts and
"done" when it has stopped them itself. On end of file without "done" (the launcher was
killed: SIGKILL, an unhandled SIGHUP, a crash) the reaper stops every task it was told of
(SIGTERM, SIGKILL after STOP_GRACE_S), removes DIR (the launcher's temporary directory)
and the network namespaces and links it was told of ("netns NAME", "link NAME") and
exits. It ignores SIGHUP and SIGINT, which a closing terminal or Ctrl-C send to the
whole process group: the launcher decides. A pipe is what watches the launcher because it
closes exactly when the launcher's process ends (PR_SET_PDEATHSIG fires when the forking
thread ends, which for a launcher driven from a test thread is too early).

`Reaper` is the launcher's side. Not thread-safe; one owner (LocalCluster).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

STOP_GRACE_S = 10.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(pids: Sequence[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main(argv: Sequence[str]) -> int:
    for sig in (signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    pids: list[int] = []
    namespaces: list[str] = []
    links: list[str] = []
    done = False
    for line in sys.stdin:
        word, _, arg = line.strip().partition(" ")
        if word == "pid":
            pids.append(int(arg))
        elif word == "netns":
            namespaces.append(arg)
        elif word == "link":
            links.append(arg)
        elif word == "done":
            done = True
    if not done:
        _stop(pids)
        for path in argv:
            shutil.rmtree(path, ignore_errors=True)
        for name in links:
            subprocess.run(["ip", "link", "del", name], capture_output=True)
        for name in reversed(namespaces):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return 0


class Reaper:
    """The launcher's end: starts the watchdog and tells it about tasks."""

    def __init__(self, dirs: Sequence[str], env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deploy.reaper", *dirs],
            stdin=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
        )

    def watch(self, pid: int) -> None:
        self._send(f"pid {pid}")

    def watch_netns(self, namespaces: Sequence[str], links: Sequence[str]) -> None:
        """Delete these network namespaces and links too (deploy.netns)."""
        for name in links:
            self._send(f"link {name}")
        for name in namespaces:
            self._send(f"netns {name}")

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the reaper is gone already (stopped)

    def close(self) -> None:
        """The launcher stopped its tasks itself: the reaper exits without acting."""
        if self.proc.poll() is None:
            self._send("done")
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        self.proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
