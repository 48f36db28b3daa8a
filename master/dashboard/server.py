"""Master, observation: the dashboard's web server (`--dashboard-port`).

Serves one page (static/index.html, drawn with plotly.js, which the `plotly` package ships
and we serve from it) and a read-only JSON API over the master's Monitor:

    GET /api/snapshot                 tasks, sessions, recent steps (Monitor.snapshot)
    GET /api/events                   the same snapshot as server-sent events, on change
                                      (at most every 0.25 s, at least every 2 s)
    GET /api/sessions/{handle}        ops histogram, cost model, recent steps
    GET /api/sessions/{handle}/graph  the placed graph (nodes, edges, transfers, EXPLAIN)
    GET /api/steps/{id}/timeline      a traced step's per-device lanes
    GET /api/steps/{id}/trace.json    the same step as Chrome trace JSON (Perfetto)

aiohttp (asyncio) serves it on its own thread and event loop, so a slow browser never
holds a gRPC thread; the Monitor's change callbacks only set an asyncio event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pathlib
import threading
from typing import Any

from aiohttp import web

from master.monitor import Monitor, chrome_trace, timeline

log = logging.getLogger(__name__)

STATIC = pathlib.Path(__file__).parent / "static"
MIN_PUSH_INTERVAL = 0.25
MAX_PUSH_INTERVAL = 2.0
SSE_STEPS = 100  # newest steps in each pushed snapshot


def _plotly_js() -> pathlib.Path:
    import plotly  # type: ignore[import-untyped]  # ships plotly.js; lazily (it is large)

    path = pathlib.Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.exists():
        raise FileNotFoundError(f"plotly.min.js not found in {path.parent}")
    return path


class DashboardServer:
    """The dashboard on HOST:PORT (port 0 picks one); start() returns once it listens."""

    def __init__(
        self, monitor: Monitor, host: str = "127.0.0.1", port: int = 0, title: str = "flowrt"
    ) -> None:
        self.monitor = monitor
        self.host = host
        self.port = port
        self.title = title
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._plotly = _plotly_js()

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> DashboardServer:
        self._thread = threading.Thread(target=self._run, name="flowrt-dashboard", daemon=True)
        self._thread.start()
        self._ready.wait(30.0)
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as e:  # noqa: BLE001  (reported to start())
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup() if self._runner else asyncio.sleep(0))
        loop.close()

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/", self._index)
        app.router.add_get("/static/plotly.min.js", self._plotly_file)
        app.router.add_static("/static/", STATIC)
        app.router.add_get("/api/snapshot", self._snapshot)
        app.router.add_get("/api/events", self._events)
        app.router.add_get("/api/sessions/{handle}", self._session)
        app.router.add_get("/api/sessions/{handle}/graph", self._graph)
        app.router.add_get("/api/steps/{step}/timeline", self._timeline)
        app.router.add_get("/api/steps/{step}/trace.json", self._trace)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, reuse_port=False)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]

    def stop(self) -> None:
        loop = self._loop
        if loop is None or self._thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=10.0)
        self._loop = None

    # -- pages -------------------------------------------------------------------------------
    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html")

    async def _plotly_file(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(self._plotly, headers={"Cache-Control": "max-age=86400"})

    # -- API ---------------------------------------------------------------------------------
    def _snapshot_json(self, steps: int | None = None) -> dict[str, Any]:
        snap = self.monitor.snapshot()
        if steps is not None:
            snap["steps"] = snap["steps"][:steps]
        snap["title"] = self.title
        return snap

    async def _snapshot(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(self._snapshot_json())

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()
        flag = threading.Event()  # set while a wake-up is already scheduled

        def wake() -> None:  # any thread
            if not flag.is_set():
                flag.set()
                loop.call_soon_threadsafe(changed.set)

        unsubscribe = self.monitor.subscribe(wake)
        try:
            while True:
                flag.clear()
                changed.clear()
                data = json.dumps(self._snapshot_json(SSE_STEPS), separators=(",", ":"))
                await response.write(f"event: snapshot\ndata: {data}\n\n".encode())
                await asyncio.sleep(MIN_PUSH_INTERVAL)
                try:
                    await asyncio.wait_for(changed.wait(), MAX_PUSH_INTERVAL)
                except asyncio.TimeoutError:
                    pass
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            unsubscribe()
        return response

    async def _session(self, request: web.Request) -> web.StreamResponse:
        detail = self.monitor.session_detail(request.match_info["handle"])
        if detail is None:
            raise web.HTTPNotFound(text="no such session")
        return web.json_response(detail)

    async def _graph(self, request: web.Request) -> web.StreamResponse:
        placed = self.monitor.placed_graph(request.match_info["handle"], request.query.get("key"))
        if placed is None:
            raise web.HTTPNotFound(text="no placed graph for this session (run a step first)")
        return web.json_response(
            {
                "key": placed.key,
                "nodes": placed.nodes,
                "edges": placed.edges,
                "transfers": placed.transfers,
            }
        )

    def _step_stats(self, request: web.Request) -> Any:
        try:
            step = int(request.match_info["step"])
        except ValueError:
            raise web.HTTPBadRequest(text="step ids are integers") from None
        stats = self.monitor.trace(step)
        if stats is None:
            raise web.HTTPNotFound(
                text=f"step {step} has no trace (traced steps are kept: the newest 50)"
            )
        return step, stats

    async def _timeline(self, request: web.Request) -> web.StreamResponse:
        step, stats = self._step_stats(request)
        body = timeline(stats)
        body["step"] = step
        return web.json_response(body)

    async def _trace(self, request: web.Request) -> web.StreamResponse:
        step, stats = self._step_stats(request)
        return web.json_response(
            chrome_trace(stats),
            headers={"Content-Disposition": f'attachment; filename="step-{step}.trace.json"'},
        )
