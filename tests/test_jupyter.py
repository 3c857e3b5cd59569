"""`make lab` starts Debian's Jupyter server with the venv as the "effstats" kernel, and a notebook runs through it.

The test starts the server exactly as a user does (`make lab`, on 127.0.0.1, a free port, a token), waits until
it answers, asks it over its REST API for a session with the "effstats" kernel (as the browser does when a notebook
is opened), executes tour.ipynb in FAST mode cell by cell over the kernel's websocket (the browser's channel),
checks the outputs, and stops the server. Nothing leaves 127.0.0.1.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from test_reports import close_websocket

# one xdist worker runs this module, so its module-scoped fixture (a notebook run, a server) starts once
pytestmark = pytest.mark.xdist_group("jupyter")
pytestmark = [pytestmark, pytest.mark.slow]  # a notebook runs through a Jupyter server
ROOT = Path(__file__).resolve().parents[1]
VENV_PY = ROOT / ".venv" / "bin" / "python"
NOTEBOOK = "tour.ipynb"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, port: int, token: str, proc: subprocess.Popen, log: Path):
        self.port, self.token, self.proc, self.log = port, token, proc, log
        self.base = f"http://127.0.0.1:{port}"

    def api(self, method: str, path: str, body: dict | None = None, timeout: float = 10) -> dict | list | None:
        req = urllib.request.Request(
            self.base + path, method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            data = r.read()
        return json.loads(data) if data else None


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("lab")
    port, token = _free_port(), uuid.uuid4().hex
    # the make a user types, not a sub-make of the make test this may run under (which prints "Entering directory"
    # lines and hands its flags down)
    make_vars = ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MPLBACKEND", *make_vars)}
    env.update(EFFSTATS_FAST="1", EFFSTATS_FIGURES=str(tmp_path / "figures"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_DATA_DIR=str(tmp_path / "data"))
    log = tmp_path / "server.log"
    lab_args = f"--no-browser --ip=127.0.0.1 --port={port} --port-retries=0 --NotebookApp.token={token}"
    # `make lab` runs the set-up first, then the server (make's dry run prints both commands and runs neither) ...
    plan = subprocess.run(["make", "-n", "lab", f"LAB_ARGS={lab_args}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    steps = [line for line in plan.stdout.splitlines() if line.strip()]
    assert plan.returncode == 0 and steps[0] == "bash scripts/setup.sh", plan.stdout + plan.stderr
    assert steps[-1].startswith(f"{VENV_PY.relative_to(ROOT)} -m notebook ") and steps[-1].endswith(lab_args), steps
    # ... and the set-up has run (make test runs it before the tests): the server starts as make lab starts it,
    # without a second run of the set-up (-o setup: make takes it as done)
    with log.open("w") as fh:
        # its own process group, so stopping it stops make and the server it started (and nothing else)
        proc = subprocess.Popen(["make", "-s", "-o", "setup", "lab", f"LAB_ARGS={lab_args}"], cwd=ROOT, env=env,
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    srv = Server(port, token, proc, log)
    srv.figures = tmp_path / "figures"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"`make lab` exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
            try:
                srv.api("GET", "/api/status", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError, socket.timeout):
                assert time.monotonic() < deadline, f"server did not answer in 60 s:\n{log.read_text()[-3000:]}"
                time.sleep(0.5)
        yield srv
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the notebook server shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_server_needs_the_token(server):
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(server.base + "/api/kernelspecs", timeout=5)
    exc.value.close()  # the refusal holds the response's socket
    assert exc.value.code == 403


def _message(session: str, code: str) -> dict:
    return {
        "header": {"msg_id": uuid.uuid4().hex, "msg_type": "execute_request", "username": "test",
                   "session": session, "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "buffers": [], "channel": "shell",
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True},
    }


async def _execute(ws, session: str, code: str, timeout: float = 120) -> tuple[list, dict]:
    """Run one cell over the kernel's websocket; returns its nbformat outputs and the execute_reply content."""
    msg = _message(session, code)
    await ws.write_message(json.dumps(msg))
    outputs, reply, idle = [], None, False
    while reply is None or not idle:
        raw = await asyncio.wait_for(ws.read_message(), timeout)
        assert raw is not None, "the kernel's websocket closed"
        m = json.loads(raw)
        if m.get("parent_header", {}).get("msg_id") != msg["header"]["msg_id"]:
            continue
        kind = m["header"]["msg_type"]
        if m["channel"] == "shell" and kind == "execute_reply":
            reply = m["content"]
        elif kind == "status":
            idle = m["content"]["execution_state"] == "idle"
        elif kind in ("stream", "display_data", "execute_result", "error"):
            outputs.append(nbformat.v4.output_from_msg(m))
    return outputs, reply


async def _run_notebook(server: Server, kernel_id: str, nb: nbformat.NotebookNode) -> list[dict]:
    session = uuid.uuid4().hex
    url = f"ws://127.0.0.1:{server.port}/api/kernels/{kernel_id}/channels?session_id={session}"
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {server.token}"}))
    try:
        probe, reply = await _execute(ws, session, (
            "import os, sys, matplotlib, effstats\n"
            "print(sys.executable); print(effstats.__file__); print(matplotlib.get_backend())\n"
            "print(open(f'/proc/{os.getppid()}/cmdline').read().replace(chr(0), ' '))"))
        assert reply["status"] == "ok", probe
        results = [{"cell": "probe", "outputs": probe, "reply": reply}]
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            outputs, reply = await _execute(ws, session, cell.source)
            cell.outputs = outputs
            results.append({"cell": i, "outputs": outputs, "reply": reply})
            if reply["status"] != "ok":
                break
        return results
    finally:
        await close_websocket(ws)


def test_make_lab_runs_a_notebook_in_the_effstats_kernel(server):
    specs = server.api("GET", "/api/kernelspecs")
    assert specs["default"] == "effstats"
    assert specs["kernelspecs"]["effstats"]["spec"]["argv"][0] == str(VENV_PY)
    # what the browser does on opening notebooks/tour.ipynb with the effstats kernel
    sess = server.api("POST", "/api/sessions", {"path": NOTEBOOK, "name": NOTEBOOK, "type": "notebook",
                                                "kernel": {"name": "effstats"}})
    kernel_id = sess["kernel"]["id"]
    assert sess["kernel"]["name"] == "effstats"
    assert kernel_id in [k["id"] for k in server.api("GET", "/api/kernels")]

    nb = nbformat.read(ROOT / "notebooks" / NOTEBOOK, as_version=4)
    results = asyncio.run(_run_notebook(server, kernel_id, nb))

    probe = "".join(o.get("text", "") for o in results[0]["outputs"]).splitlines()
    assert probe[0] == str(VENV_PY)                       # the venv's python ...
    # ... importing this checkout's effstats (installed, no PYTHONPATH)
    assert probe[1].startswith(str(ROOT / "effstats"))
    assert "inline" in probe[2]                            # figures show inline
    assert "-m notebook" in probe[3]                       # the kernel is the server's child
    failed = [r for r in results if r["reply"]["status"] != "ok"]
    assert not failed, [o for o in failed[0]["outputs"] if o["output_type"] == "error"]
    n_code = sum(c.cell_type == "code" for c in nb.cells)
    assert len(results) == n_code + 1
    outputs = [o for r in results for o in r["outputs"]]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3    # tour's three figures, inline
    last = "".join(o.get("text", "") for o in results[-1]["outputs"])
    assert "FAST mode" in last and "elapsed" in last
    claims = pd.read_csv(server.figures / "tour_claims.csv")
    assert len(claims) >= 10 and claims["holds"].all()

    server.api("DELETE", f"/api/sessions/{sess['id']}")
    assert kernel_id not in [k["id"] for k in server.api("GET", "/api/kernels")]
