"""The dashboard in a real headless browser (Debian's chromium driven by Playwright), over a
real cluster started by the CLIs (`python -m master --dashboard-port 0`).

The page must: load and list every task as up; show a step after a client runs it; show a
failed step with its code and node; render the timeline of a traced cross-worker step with
its Send/Recv transfers on both devices; render the placed graph of a session with its
placement decisions and cross-device edges; show a task as down after it is killed.
Screenshots go to $FLOWRT_TEST_ARTIFACTS (default: .artifacts/ at the repository root).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import client as tf
from deploy.launcher import LocalCluster

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("FLOWRT_TEST_ARTIFACTS", REPO / ".artifacts")) / "dashboard"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Flags for a sandboxed CI box: no GPU, no network of its own, a throwaway profile.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
WORKER1 = "/job:worker/replica:0/task:1"
TIMEOUT_MS = 45_000  # generous: CI machines are shared and slow

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on this machine (.ci/run installs Debian's chromium)"
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(
        master_args=["--dashboard-port", "0", "--trace-sample-rate", "1"], log=None
    ) as c:
        yield c


@pytest.fixture(scope="module")
def url(cluster: LocalCluster) -> str:
    lines = cluster.tasks["master"].lines
    found = [m.group(1) for m in map(re.compile(r"dashboard on (http://\S+)").search, lines) if m]
    assert len(found) == 1, lines
    return found[0]


@pytest.fixture(scope="module")
def page(url: str) -> Iterator[object]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        except Exception as e:  # noqa: BLE001  (a box that forbids the browser)
            pytest.skip(f"chromium cannot start here: {e}")
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.set_default_timeout(TIMEOUT_MS)
        sync_api.expect.set_options(timeout=TIMEOUT_MS)
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url)
        yield pg
        assert errors == [], errors  # no script error on the page, start to end
        browser.close()


def _shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _graph() -> tuple[tf.Graph, object, object, object, object]:
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.ones([3, 3]), name="w")
        with tf.device("/job:worker/task:1"):
            y = tf.matmul(w, w, name="y")
        with tf.device("/job:worker/task:0"):
            z = tf.reduce_sum(y, name="z")
        shape = tf.placeholder(tf.int32, [None], name="shape")
        bad = tf.reshape(y, shape, name="bad")
    return g, w, z, shape, bad


def test_dashboard_stays_usable_with_a_large_graph_and_many_steps(
    cluster: LocalCluster, page, url: str
) -> None:
    """A 10,000-node graph view renders and stays interactive while clients run ~100
    small steps a second (every one traced, with the sample rate at 1)."""
    n = 10_000
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        with tf.device("/job:ps/task:0"):
            v = x
            for i in range(n // 2):
                v = tf.add(v, 1.0, name=f"ps_chain_{i}")
        with tf.device("/job:worker/task:0"):
            for i in range(n // 2):
                v = tf.add(v, 1.0, name=f"w0_chain_{i}")
        big = v
        small = tf.add(x, 1.0, name="small")
    # Elementwise fusion (on by default) would fold the chains into a few nodes: the view
    # is to draw all 10,000.
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.remapping = 2  # RewriterConfig.OFF
    with tf.Session(cluster.target, graph=g, config=config) as sess:
        assert sess.run(big, {x: 0.0}) == float(n)
        handle = json.load(urllib.request.urlopen(url + "api/snapshot", timeout=10))["sessions"][
            -1
        ]["handle"]
        stop = threading.Event()
        ran = [0]

        failures: list[BaseException] = []

        def load() -> None:  # small steps for the page to keep up with
            try:
                while not stop.is_set():
                    sess.run(small, {x: 1.0})
                    ran[0] += 1
                    time.sleep(0.005)
            except BaseException as e:  # noqa: BLE001  (reported by the test)
                failures.append(e)

        threads = [threading.Thread(target=load) for _ in range(2)]
        for t in threads:
            t.start()
        try:
            row = page.locator(f'#sessions tr[data-session="{handle}"]')
            sync_api.expect(row).to_have_count(1, timeout=TIMEOUT_MS)
            row.locator("a.graph-link").click()
            page.wait_for_function(
                f"(document.getElementById('graph').data || []).reduce("
                f"(k, t) => k + (t.mode === 'markers' ? t.x.length : 0), 0) >= {n}",
                timeout=120_000,
            )
            sync_api.expect(page.locator("#explain tbody tr")).to_have_count(
                300, timeout=TIMEOUT_MS
            )
            page.fill("#explain-filter", "w0_chain_4999")
            sync_api.expect(page.locator('#explain tr[data-node="w0_chain_4999"]')).to_have_count(1)
            assert page.locator("#explain tbody tr").count() <= 2  # and its fetch's _Send
            before = ran[0]
            # The live step table keeps up: a step run after this point shows up.
            sync_api.expect(page.locator("#live")).to_have_text("live")
            page.wait_for_function(
                "Math.max(...[...document.querySelectorAll('#steps tr[data-step]')]"
                ".map(r => +r.dataset.step)) > 0",
                timeout=TIMEOUT_MS,
            )
            newest = json.load(urllib.request.urlopen(url + "api/snapshot", timeout=10))["steps"][
                0
            ]["id"]
            page.wait_for_function(
                f"[...document.querySelectorAll('#steps tr[data-step]')]"
                f".some(r => +r.dataset.step >= {newest})",
                timeout=TIMEOUT_MS,
            )
            assert ran[0] > before  # the load went on meanwhile
            _shot(page, "0-large-graph")
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert failures == []
        page.fill("#explain-filter", "")


def test_dashboard_shows_the_cluster_live(cluster: LocalCluster, page, url: str) -> None:
    # Every task, up.
    rows = page.locator("#tasks tbody tr")
    sync_api.expect(rows).to_have_count(3, timeout=TIMEOUT_MS)
    sync_api.expect(page.locator('#tasks tr[data-state="up"]')).to_have_count(3, timeout=TIMEOUT_MS)
    sync_api.expect(page.locator("#live")).to_have_text("live", timeout=TIMEOUT_MS)
    for task in ("/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0", WORKER1):
        assert page.locator(f'#tasks tr[data-task="{task}"]').count() == 1
    _shot(page, "1-cluster")

    g, w, z, shape, bad = _graph()
    with tf.Session(cluster.target, graph=g) as sess:
        sess.run(w.initializer)
        assert sess.run(z) == 27.0
        # A step appears without reloading, with its outcome.
        ok = page.locator('#steps tr[data-outcome="ok"]')
        sync_api.expect(ok.first).to_be_visible(timeout=TIMEOUT_MS)
        # A failed step, with its code and node.
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad, {shape: [4]})
        failed = page.locator('#steps tr[data-outcome="INVALID_ARGUMENT"]')
        sync_api.expect(failed).to_have_count(1, timeout=TIMEOUT_MS)
        assert "bad" in failed.inner_text()
        assert "Input to reshape" in failed.inner_text()
        _shot(page, "2-steps")

        # The timeline of the traced cross-worker step (fetching z: ps -> worker1 -> worker0).
        z_step = json.load(urllib.request.urlopen(url + "api/snapshot", timeout=10))["steps"]
        z_id = next(s["id"] for s in z_step if s["fetches"] == ["z:0"] and s["traced"])
        page.locator(f'#steps tr[data-step="{z_id}"] a.timeline-link').click()
        sync_api.expect(page.locator("#timeline-section")).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_function(
            "document.getElementById('timeline').data && "
            "document.getElementById('timeline').data.length == 2",
            timeout=TIMEOUT_MS,
        )
        traces = page.evaluate(
            "document.getElementById('timeline').data.map(t => ({name: t.name, y: t.y}))"
        )
        kernels, transfers = traces
        lanes = set(kernels["y"]) | set(transfers["y"])
        assert {
            "/job:ps/replica:0/task:0/device:CPU:0",
            f"{WORKER1}/device:CPU:0",
            "/job:worker/replica:0/task:0/device:CPU:0",
        } <= lanes
        assert len(transfers["y"]) >= 2  # _Send on ps and _Recv on worker 1, at least
        assert page.locator("#timeline .bars .point").count() > 0  # drawn, not only data
        href = page.locator("#trace-download").get_attribute("href")
        trace = json.load(urllib.request.urlopen(url + href.lstrip("/"), timeout=10))
        assert any(e.get("name") == "_Recv" for e in trace["traceEvents"])
        _shot(page, "3-timeline")

        # The placed graph of the session, with the placement decisions (EXPLAIN).
        row = page.locator("#sessions tbody tr").first
        sync_api.expect(row.locator("a.graph-link")).to_be_visible(timeout=TIMEOUT_MS)
        row.locator("a.graph-link").click()
        sync_api.expect(page.locator("#graph-section")).to_be_visible(timeout=TIMEOUT_MS)
        # This session's client graphs replace the previous view's (the large graph's) in
        # the selector once its detail has loaded; pick z's (ps -> worker 1 -> worker 0).
        page.wait_for_function(
            "[...document.querySelectorAll('#graph-select option')]"
            ".some(o => o.textContent.startsWith('- -> z:0'))"
        )
        keys = page.locator("#graph-select option").all_inner_texts()
        z_key = next(k for k in keys if k.startswith("- -> z:0"))
        page.select_option("#graph-select", label=z_key)
        sync_api.expect(page.locator('#explain tr[data-node="z"]')).to_have_count(1)
        names = page.evaluate("document.getElementById('graph').data.map(t => t.name)")
        assert "cross-device (Send/Recv)" in names
        assert f"{WORKER1}/device:CPU:0" in names
        explained = page.locator('#explain tr[data-node="w"]')
        sync_api.expect(explained).to_have_attribute("data-reason", "explicit")
        assert page.locator("#transfers tbody tr").count() >= 2
        z_row = page.locator('#explain tr[data-node="z"]')
        assert "/job:worker/replica:0/task:0" in z_row.inner_text()
        _shot(page, "4-graph")

    # A task that dies shows as down within seconds.
    cluster.tasks["worker1"].kill()
    down = page.locator(f'#tasks tr[data-task="{WORKER1}"]')
    sync_api.expect(down).to_have_attribute("data-state", "down", timeout=20_000)
    _shot(page, "5-task-down")
