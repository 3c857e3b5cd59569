"""The loop guide's word on the metric lm-eval logs are read with: ``acc`` for every task unless ``--metric`` says
otherwise, and the per-task form it shows for hellaswag's ``acc_norm`` is one ``select`` takes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.workflow import write_lm_eval_samples

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "loop.rst"


def _logs(folder: Path) -> Path:
    y = np.random.default_rng(0).random((8, 40)) < np.linspace(0.3, 0.9, 8)[:, None]
    ids = [f"hellaswag/{i}" for i in range(20)] + [f"arc_easy/{i}" for i in range(20)]
    return write_lm_eval_samples(ResponseMatrix(y, model_ids=[f"m{i}" for i in range(8)], item_ids=ids), folder)


def test_the_guides_metric_sentence_says_what_select_reads(tmp_path):
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    said = re.search(r"read with the manifest's ``--metric`` \((.*?)\) and ``--filter``", text)
    assert said, "the guide's sentence on the metric"
    shown = re.search(r"``select --metric (hellaswag=\S+)``", said.group(1))
    assert shown and "acc`` by default, for every task" in said.group(1), said.group(1)
    logs = _logs(tmp_path / "logs")
    assert main(["select", str(logs), "--budget", "10", "--out", str(tmp_path / "plain"), "--no-progress"]) == 0
    assert json.loads((tmp_path / "plain" / "manifest.json").read_text())["reference"]["metric"] == "acc"
    assert main(["select", str(logs), "--budget", "10", "--metric", shown.group(1), "--out", str(tmp_path / "norm"),
                 "--no-progress"]) == 0
    assert json.loads((tmp_path / "norm" / "manifest.json").read_text())["reference"]["metric"] == shown.group(1)
