"""Heavy page work in niced child processes (issue 35, docs/reliability.md#5c-hostile-neighbours-round-two-issue-35).

A web process runs its requests in threads that share one interpreter lock. A page that renders
for half a second (a preview of a 5,000-node preset, mostly template work) holds that lock while
other servers' short API calls wait for it at every hand-over. `run(work, **kwargs)` sends such
work to a child process instead: the request's thread waits on a socket (the lock released) while
the child computes, at a lower scheduling priority (`OFFLOAD_NICE`), so the web process's own
threads come first for the processor too.

- The children are started in the process that needs them, all `OFFLOAD_WORKERS` at its first
  call (a web worker forked by the server starts its own), so that no later call, under load, waits
  for a start; `OFFLOAD_WORKERS=0` runs the work inline (the
  default without REDIS_URL, and in the test suite unless a test turns it on).
- Each child is a new interpreter (`python -c`, started by fork and exec at once), never a fork of
  the web process: that has threads, open database and Redis sockets and held locks, which a fork
  would copy half-way. Not multiprocessing's "spawn" either, which imports the parent's `__main__`
  again in the child (a script without a main guard would start itself over), nor its
  "forkserver", whose server keeps the environment and settings of its first start (a test's
  database is chosen later). A child shares nothing with its parent but the settings it is sent
  (`DATABASES`, `CACHES`: a test's database, a bench's cache prefix); restarts are rare (only after
  a wall-limit kill), so its start-up (Django set up, then `OFFLOAD_WARM_UP`: the token tables, the
  views, the templates, a few seconds at a low priority) is paid once, and its first work costs what
  the next ones do.
- Servers take turns (issue 50, item 2): each server's calls wait in a line of their own, and a
  child that comes free goes to the waiting server whose last turn is the oldest (round robin: the
  server just served goes to the back), never to one that already holds `OFFLOAD_PER_SERVER` children (1; at most
  `OFFLOAD_WORKERS` - 1, so however much one server sends, another server's work finds a child
  free). At most `OFFLOAD_WAITING_PER_SERVER` (1) of one server's calls wait; the next is refused
  at once with `OffloadBusy`, whose sentence the page shows, instead of holding a thread of the
  web process while it waits.
- The work has a wall limit (`OFFLOAD_WALL_SECONDS`, from when the child has it; waiting for a
  free child is bounded by the same figure, a new child's start is not counted): past it the
  child is killed and its successor started at once, kept for the next call of the server whose
  work was stopped: that server waits for the start it caused, while every other server takes a
  child already set up (the one that last did its work first: `_Child.preference`). `OffloadTimeout`
  says so in one sentence the page shows.
- Work its caller knows to be small (a preview within the bounds of `assembly/preview_result.py`)
  runs in the request's thread instead (`run_here`): no child to start or wait for.
- Each call's waits (its turn, a new child's start, the work) are logged at INFO on
  `tavernkeep.offload` (`OFFLOAD_LOG_LEVEL`); `bench/neighbours_load.py` reads them.
- The child's CPU time is charged to the request's server (`core.fairness.charge_elsewhere`), so
  work moved out of the web process still counts toward the server's share; a killed child is
  charged the CPU the kernel counted for that work (not the wall time: a child starved of the
  processor by other servers' work would leave its server refused for seconds it never used).
- The child's other settings come from the environment like the web process's own; it reads the
  database and the shared cache itself, so only the request's small inputs cross, and the answer
  (HTML, a dataclass) comes back. They cross pickled, over a socket pair only the two processes
  hold (unlike the shared cache, which stores data and never pickles). A child exits when its
  parent does.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

from django.conf import settings

from . import fairness
from .errors import UserError

T = TypeVar("T")
log = logging.getLogger("tavernkeep.offload")

# What a child needs from the parent beyond its environment: where the data is.
_SNAPSHOT_SETTINGS = ("DATABASES", "CACHES", "OFFLOAD_WARM_UP")
_ROOT = Path(__file__).resolve().parent.parent  # the project: what the child imports from
START_SECONDS = 60  # the most a new child may take to set Django up


class OffloadUnavailable(UserError):
    """The work was not done: stopped at its wall limit, or refused while the server's turn was
    taken; `message` is one sentence for the page."""


class OffloadTimeout(OffloadUnavailable):
    """The work passed its wall limit (or waited for a child that long) and was stopped."""

    status = 503

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(
            f"This took more than {seconds:g} s of work and was stopped, so that other servers "
            "keep their share of the web process; try again with less (a smaller sample or preset)."
        )


class OffloadBusy(OffloadUnavailable):
    """The server already has as much work running and waiting for the children as it may."""

    def __init__(self) -> None:
        super().__init__(
            "This server already has work running and waiting for the preview and regex-tester "
            "processes; wait for it to finish, then try again."
        )


class OffloadFailed(Exception):
    """The child died or answered something that could not be read back."""


def workers() -> int:
    return max(0, int(getattr(settings, "OFFLOAD_WORKERS", 0)))


def wall_seconds() -> float:
    return float(getattr(settings, "OFFLOAD_WALL_SECONDS", 10.0))


def per_server(size: int) -> int:
    """Children one server may hold at once: `OFFLOAD_PER_SERVER`, and always one fewer than the pool."""
    wanted = max(1, int(getattr(settings, "OFFLOAD_PER_SERVER", 1)))
    return max(1, min(wanted, size - 1))


def waiting_per_server() -> int:
    return max(0, int(getattr(settings, "OFFLOAD_WAITING_PER_SERVER", 1)))


def run(work: Callable[..., T], /, **kwargs: Any) -> T:
    """`work(**kwargs)`'s answer, computed in a child process when offloading is on, else here.

    `work` must be a module-level function (the child imports it by name) whose arguments and answer
    pickle. Its exceptions are raised here. Raises OffloadTimeout past the wall limit (offloaded
    only: inline work cannot be stopped), OffloadBusy when the server's line is full, and
    OffloadFailed when the child dies."""
    if workers() == 0:
        return work(**kwargs)
    servers = fairness.current_servers()
    return _pool().call(work, kwargs, wall_seconds(), server=servers[0] if servers else None)


def run_here(work: Callable[..., T], /, **kwargs: Any) -> T:
    """`work(**kwargs)` in this thread: work its caller knows to be small (a preview within the
    bounds of docs/reliability.md, "Small work in the web thread"), which no child need start or be
    scheduled for. Its CPU is the request's own, so the server's share meter counts it as any page's."""
    servers = fairness.current_servers()
    trace = _Trace(servers[0] if servers else None, work, time.monotonic())
    trace.outcome, cpu = "inline", time.thread_time()
    try:
        return work(**kwargs)
    finally:
        trace.step("work")
        trace.cpu = time.thread_time() - cpu
        trace.report()


# -- the pool ------------------------------------------------------------------------------------


_NOBODY = object()  # a child started for the pool, not in place of one whose work was stopped


class _Child:
    """One child: a fresh interpreter running `child_main`, talking over a socket pair.
    `successor_of` is the server whose work was stopped (or whose child died), leaving this child
    to start in its place."""

    def __init__(self, successor_of: object = _NOBODY) -> None:
        self.successor_of = successor_of
        self.last_server: object = _NOBODY
        ours, theirs = socket.socketpair()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])),
        }
        try:
            self.process = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
                [
                    sys.executable,
                    "-c",
                    "from core.offload import child_main; child_main()",
                    str(theirs.fileno()),
                ],
                pass_fds=[theirs.fileno()],
                env=env,
                stdin=subprocess.DEVNULL,
            )
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        module = os.environ.get("DJANGO_SETTINGS_MODULE") or getattr(settings, "SETTINGS_MODULE", None)
        self.conn.send((module, _snapshot(), int(getattr(settings, "OFFLOAD_NICE", 10))))
        self.ready = False

    def preference(self, key: Key) -> int:
        """How soon `key`'s work takes this idle child (lowest first): the successor of its own
        stopped work (a server pays for the start its work caused), then the child that last did its
        work (its caches hold the server's preset), then one set up that has not worked yet, then one
        that last worked for another server, then one still starting; another server's successor
        last. So a server that keeps sending does not take the child another server's pages use."""
        if self.successor_of is not _NOBODY:
            return 0 if self.successor_of == key else 5
        if self.ready:
            return 1 if self.last_server == key else 3
        return 2 if self.conn.poll(0) else 4

    def wait_until_ready(self) -> None:
        """Wait for a new child to have set Django up: its start is not its first work's time."""
        if self.ready:
            return
        if not self.conn.poll(START_SECONDS):
            raise OSError(f"the offload child did not start within {START_SECONDS} s")
        self.conn.recv()
        self.ready = True

    def kernel_cpu(self) -> float | None:
        """The CPU time the kernel has counted for the child so far (None where it cannot say)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return None

    def is_alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.is_alive():
            self.process.kill()
        self.process.wait(5)
        self.conn.close()


class _Ticket:
    __slots__ = ("granted",)

    def __init__(self) -> None:
        self.granted = False


_TURNS_KEPT = 1024  # servers whose last turn is remembered
Key = int | None  # a server, or None for work outside a request (a command, a task)


class _Turns:
    """Who has the next free child: the waiting server whose last turn is the oldest (one never
    served first; ties in order of arrival), among those under their cap."""

    def __init__(self, size: int, per_server: int, waiting: int) -> None:
        self.free = size
        self.size, self.per_server, self.waiting = size, per_server, waiting
        self.holding: dict[Key, int] = {}
        self.lines: OrderedDict[Key, deque[_Ticket]] = OrderedDict()  # in order of arrival
        self.last_turn: dict[Key, int] = {}  # when each server was last given a child
        self._turns = itertools.count()
        self.served: list[Key] = []  # who was given a child, in order (the last 64: tests read it)
        self._changed = threading.Condition()

    def _cap(self, key: Key) -> int:
        return self.size if key is None else self.per_server

    def take(self, key: Key, deadline: float) -> bool:
        """Wait for `key`'s turn; False at `deadline`. OffloadBusy at once when its line is full."""
        with self._changed:
            line = self.lines.get(key)
            if key is not None and line is not None and len(line) >= self.waiting:
                raise OffloadBusy
            if key is not None and line is None and self.waiting == 0 and not self._may_run(key):
                raise OffloadBusy
            ticket = _Ticket()
            self.lines.setdefault(key, deque()).append(ticket)
            self._hand_out()
            while not ticket.granted:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._withdraw(key, ticket)
                    return False
                self._changed.wait(left)
            return True

    def give_back(self, key: Key) -> None:
        with self._changed:
            self.free += 1
            held = self.holding.get(key, 1) - 1
            if held > 0:
                self.holding[key] = held
            else:
                self.holding.pop(key, None)
            self._hand_out()

    def _may_run(self, key: Key) -> bool:
        return self.free > 0 and self.holding.get(key, 0) < self._cap(key)

    def _hand_out(self) -> None:
        """Give free children to the servers in turn; the server served goes to the back."""
        handed = False
        while self.free > 0:
            ready = [key for key in self.lines if self.holding.get(key, 0) < self._cap(key)]
            if not ready:
                break
            key = min(ready, key=lambda key: self.last_turn.get(key, -1))  # ties: the first in line
            line = self.lines[key]
            line.popleft().granted = True
            if not line:
                del self.lines[key]
            self.free -= 1
            self.holding[key] = self.holding.get(key, 0) + 1
            self.last_turn[key] = next(self._turns)
            self.served = [*self.served[-63:], key]
            handed = True
        if len(self.last_turn) > _TURNS_KEPT:  # forget the servers that neither wait nor hold
            for key in [key for key in self.last_turn if key not in self.lines and key not in self.holding]:
                del self.last_turn[key]
        if handed:
            self._changed.notify_all()

    def _withdraw(self, key: Key, ticket: _Ticket) -> None:
        line = self.lines.get(key)
        if line is not None and ticket in line:
            line.remove(ticket)
            if not line:
                del self.lines[key]

    def waiting_of(self, key: Key) -> int:
        with self._changed:
            return len(self.lines.get(key, ()))

    def held_by(self, key: Key) -> int:
        with self._changed:
            return self.holding.get(key, 0)


class _Trace:
    """Where one call's time went, logged at INFO on `tavernkeep.offload` (the neighbours bench
    reads it): waiting for the server's turn, for a new child to set Django up, and the work."""

    def __init__(self, server: Key, work: Callable[..., Any], started: float) -> None:
        self.server, self.work, self.mark = server, getattr(work, "__name__", "?"), started
        self.steps: dict[str, float] = {}
        self.outcome, self.fresh, self.cpu = "ok", False, 0.0

    def step(self, name: str) -> None:
        now = time.monotonic()
        self.steps[name], self.mark = now - self.mark, now

    def report(self) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        self.step("after")  # time past the last step (a wall-limit kill, a refusal)
        log.info(
            "offload server=%s work=%s outcome=%s fresh_child=%s %s cpu_ms=%.1f",
            self.server,
            self.work,
            self.outcome,
            int(self.fresh),
            " ".join(f"{name}_ms={seconds * 1000:.1f}" for name, seconds in self.steps.items()),
            self.cpu * 1000,
        )


class _Pool:
    def __init__(self, size: int) -> None:
        self.size = size
        self.pid = os.getpid()
        self.turns = _Turns(size, per_server(size), waiting_per_server())
        self._lock = threading.Lock()
        # Every child is started now, not on the call that first finds none free: under load a start
        # at a low priority takes many seconds, which would fall on another server's first page.
        self._idle: list[_Child] = []
        with contextlib.suppress(OSError):  # else each call starts the child it needs
            self._idle = [_Child() for _ in range(size)]

    def call(self, work: Callable[..., T], kwargs: dict[str, Any], wall: float, *, server: int | None) -> T:
        started = time.monotonic()
        payload = pickle.dumps((work, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        trace = _Trace(server, work, started)
        try:
            if not self.turns.take(server, started + wall):
                raise OffloadTimeout(wall)
            trace.step("turn")
            try:
                return self._call_held(work, payload, wall, trace, server)
            finally:
                self.turns.give_back(server)
        except BaseException as exc:
            trace.outcome = type(exc).__name__
            raise
        finally:
            trace.report()

    def _call_held(
        self, work: Callable[..., T], payload: bytes, wall: float, trace: _Trace, server: Key
    ) -> T:
        child = self._take(server)
        trace.fresh = not child.ready
        try:
            child.wait_until_ready()
            trace.step("start")
            cpu_before = child.kernel_cpu()
            child.conn.send_bytes(payload)
            sent = time.monotonic()
            if not child.conn.poll(wall):
                # Charged the CPU the work used: a child starved of the processor by other work is
                # not charged its wait (the wall time, where the kernel cannot say).
                cpu_after = child.kernel_cpu()
                used = (
                    cpu_after - cpu_before
                    if cpu_before is not None and cpu_after is not None
                    else time.monotonic() - sent
                )
                self._replace(child, server)
                fairness.charge_elsewhere(used)
                raise OffloadTimeout(wall)
            status, value, cpu = child.conn.recv()
            trace.step("work")
            trace.cpu = cpu
        except (EOFError, OSError) as exc:
            self._replace(child, server)
            raise OffloadFailed(f"the offload child stopped: {exc!r}") from exc
        self._give_back(child)
        fairness.charge_elsewhere(cpu)
        if status == "error":
            raise value
        return value

    def _take(self, key: Key) -> _Child:
        """An idle child for `key`'s work, in the order of `_Child.preference`; a new one if none."""
        with self._lock:
            for child in [child for child in self._idle if not child.is_alive()]:
                self._idle.remove(child)
                child.stop()
            if self._idle:
                child = min(self._idle, key=lambda child: child.preference(key))
                self._idle.remove(child)
                child.successor_of, child.last_server = _NOBODY, key
                return child
        return _Child()

    def _replace(self, child: _Child, key: Key) -> None:
        """Stop `child` and start its successor at once, kept for `key`'s next work: it sets Django
        up while nobody waits for it, and the server whose work was stopped is the one that waits
        if it is not ready, not another server, which takes a child already set up and warm."""
        child.stop()
        with contextlib.suppress(OSError):  # else the next call starts one
            self._give_back(_Child(successor_of=key))

    def _give_back(self, child: _Child) -> None:
        with self._lock:
            self._idle.append(child)

    def close(self) -> None:
        with self._lock:
            children, self._idle = self._idle, []
        for child in children:
            child.stop()


_pool_lock = threading.Lock()
_current: _Pool | None = None


def _pool() -> _Pool:
    global _current
    with _pool_lock:
        # A forked web worker does not own its parent's children: it starts its own.
        size = workers()
        if (
            _current is None
            or _current.pid != os.getpid()
            or _current.size != size
            or (_current.turns.per_server, _current.turns.waiting) != (per_server(size), waiting_per_server())
        ):
            _current = _Pool(size)
        return _current


def shut_down() -> None:
    """Stop this process's idle children (the next call starts new ones): tests, and settings changes."""
    global _current
    with _pool_lock:
        pool, _current = _current, None
    if pool is not None and pool.pid == os.getpid():
        pool.close()


def _snapshot() -> dict[str, Any]:
    return {name: getattr(settings, name) for name in _SNAPSHOT_SETTINGS if hasattr(settings, name)}


# -- the child -----------------------------------------------------------------------------------


def child_main() -> None:
    """A child's life: settings from the parent, Django set up, then one piece of work after another
    until the parent goes."""
    conn = Connection(int(sys.argv[1]))
    settings_module, overrides, nice = conn.recv()
    os.nice(nice)
    _exit_with_parent()
    if settings_module:
        os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    from django.conf import settings as child_settings

    for name, value in overrides.items():
        setattr(child_settings, name, value)
    import django

    django.setup()
    from django.db import close_old_connections

    _warm_up(getattr(child_settings, "OFFLOAD_WARM_UP", ""))
    conn.send("ready")
    while True:
        try:
            work, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        started = time.process_time()
        close_old_connections()
        try:
            answer: tuple[str, Any] = ("ok", work(**kwargs))
        except Exception as exc:  # the caller gets it raised
            answer = ("error", exc)
        finally:
            close_old_connections()
        cpu = time.process_time() - started
        try:
            conn.send((*answer, cpu))
        except Exception as exc:  # an answer or exception that does not pickle
            conn.send(
                ("error", OffloadFailed(f"the offloaded work's answer could not be sent: {exc!r}"), cpu)
            )


def _warm_up(path: str) -> None:
    """Run the warm-up named by `OFFLOAD_WARM_UP` (a dotted path) before the child says it is ready:
    a new interpreter's first work would otherwise load the token tables, import the views and
    compile the templates (about 1.3 s of CPU, 50 times a small preview's) while its caller waits."""
    if not path:
        return
    from django.utils.module_loading import import_string

    try:
        import_string(path)()
    except Exception:  # a cold child is only slower
        log.warning("the offload child's warm-up failed", exc_info=True)


def _exit_with_parent() -> None:
    """A child whose web process is gone stops, even in the middle of work."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=watch, name="offload-parent-watch", daemon=True).start()
