"""``effstats audit`` on leaderboard exports as their sites write them: what is a scenario, what names the models,
what the published aggregate is, and what a table of ties says.

Real exports are read where ../shared/data/leaderboards holds them (BBH, GLUE, MTEB: Rank, Parameters, Model Size);
the others are written here column for column as the sites export them (Open LLM Leaderboard v1 and v2, a table with
summary columns, a weighted domain average).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main
from effstats.reliability import audit


def _board(n_models: int = 10, n_scen: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = np.clip(np.linspace(0.85, 0.3, n_models)[:, None] + rng.normal(0, 0.06, (n_models, n_scen)), 0, 1)
    return pd.DataFrame(x.round(3), index=pd.Index([f"org/model-{i}" for i in range(n_models)], name="model"),
                        columns=[f"S{j}" for j in range(n_scen)])


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_all_equal_scores_say_every_model_ties(tmp_path):
    board = _board() * 0 + 0.5
    board.to_csv(tmp_path / "ties.csv")
    res = audit(tmp_path / "ties.csv", tmp_path / "out", n_boot=20, progress=False)
    assert (res.scores["rank"] == 1).all()
    report = (tmp_path / "out" / "report.md").read_text()
    assert "**No leader**: every model ties, with the same Mean Win Rate for all 10 models" in report
    assert "**The leader**" not in report


def test_a_tie_for_first_names_the_tied_models(tmp_path):
    board = _board()
    board.iloc[1] = board.iloc[0]
    board.to_csv(tmp_path / "top.csv")
    res = audit(tmp_path / "top.csv", tmp_path / "out", n_boot=20, progress=False)
    first = sorted(res.scores["model"][res.scores["rank"] == 1])
    assert first == ["org/model-0", "org/model-1"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "**No single leader**: 2 models tie for first with the same Mean Win Rate: org/model-0, org/model-1" in report


@pytest.mark.parametrize("layout", ["wide", "long", "openllm"])
def test_an_empty_model_name_is_refused_naming_its_row(tmp_path, capsys, layout):
    board = _board()
    if layout == "wide":
        board.rename(index={"org/model-3": ""}).to_csv(tmp_path / "t.csv")
    elif layout == "long":
        long = board.reset_index().melt(id_vars="model", var_name="scenario", value_name="score")
        long.loc[3, "model"] = " "
        long.to_csv(tmp_path / "t.csv", index=False)
    else:
        v1 = (board.iloc[:, :5] * 100).set_axis(["ARC", "HellaSwag", "MMLU", "TruthfulQA", "Winogrande"], axis=1)
        v1 = v1.assign(GSM8K=v1["ARC"], Average=v1.mean(axis=1).round(2)).reset_index().rename(
            columns={"model": "fullname"})
        v1.loc[3, "fullname"] = np.nan
        v1.to_csv(tmp_path / "t.csv", index=False)
    code, out, err = _run(["audit", tmp_path / "t.csv", "--out", tmp_path / "o", "--n-boot", 20, "--no-progress"],
                          capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "SCORES: row 4 (line 5) has an empty model name in column" in err


V1_HEADERS = {"ARC": "ARC(25-shot)", "HellaSwag": "HellaSwag(10-shot)", "MMLU": "MMLU(5-shot)",
              "TruthfulQA": "TruthfulQA(0-shot)", "Winogrande": "Winogrande(5-shot)", "GSM8K": "GSM8K(5-shot)"}


def _openllm_v1(spaced: bool) -> pd.DataFrame:
    """The v1 leaderboard's export: model link and name, the average, then the six tasks with their shots, in %."""
    board = (_board(12, 6, seed=4) * 100).round(1)
    heads = {k: (v.replace("(", " (") + " ⬆️" if spaced else v) for k, v in V1_HEADERS.items()}
    board.columns = list(heads.values())
    links = [f'<a target="_blank" href="https://huggingface.co/{m}">{m}</a>' for m in board.index]
    out = board.assign(**{"Average ⬆️": board.mean(axis=1).round(2)}).reset_index()
    return out.assign(Model=links, **{"#Params (B)": np.linspace(1, 70, 12).round(1)}).rename(
        columns={"model": "model_name_for_query"})


@pytest.mark.parametrize("spaced", [False, True])
@pytest.mark.parametrize("fmt", ["openllm-csv", "auto"])
def test_openllm_v1_headers_with_shots_are_its_tasks(tmp_path, spaced, fmt):
    df = _openllm_v1(spaced)
    df.to_csv(tmp_path / "v1.csv", index=False)
    res = audit(tmp_path / "v1.csv", tmp_path / "out", format=fmt, n_boot=20, progress=False)
    assert sorted(res.scenarios["scenario"]) == sorted(V1_HEADERS)  # not "#Params (B)", not the average
    # models named by the links' text, ranked by the published average
    assert set(res.scores["model"]) == {f"org/model-{i}" for i in range(12)}
    assert res.published["column"] == "Average ⬆️"
    assert res.published["kendall_tau"] == pytest.approx(1.0)
    assert "<a " not in (tmp_path / "out" / "report.md").read_text()


def test_openllm_csv_without_its_task_columns_names_the_columns_it_expects(tmp_path, capsys):
    _board().reset_index().rename(columns={"model": "fullname"}).to_csv(tmp_path / "x.csv", index=False)
    code, out, err = _run(["audit", tmp_path / "x.csv", "--format", "openllm-csv", "--out", tmp_path / "o",
                           "--n-boot", 20, "--no-progress"], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert "expected the v1 tasks ARC, HellaSwag, MMLU, TruthfulQA, Winogrande, GSM8K (headers such as " \
           "'ARC (25-shot)' too) or the v2 tasks IFEval, BBH, MATH Lvl 5, GPQA, MUSR, MMLU-PRO" in err


@pytest.mark.parametrize("order", ["Model first", "fullname first"])
def test_the_plain_model_column_is_the_id_not_the_html_link(tmp_path, order):
    """Open LLM v2's export: 'Model' holds <a href=…> links, 'fullname' the ids (here with tasks of its own, so the
    generic table reader chooses)."""
    board = _board(10, 4, seed=2)
    links = [f'<a target="_blank" href="https://huggingface.co/{m}" style="color: x;">{m}</a>  📑' for m in board.index]
    t = board.reset_index().rename(columns={"model": "fullname"}).assign(Model=links)
    cols = ["Model", "fullname"] if order == "Model first" else ["fullname", "Model"]
    t[cols + list(board.columns)].to_csv(tmp_path / "v2.csv", index=False)
    res = audit(tmp_path / "v2.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scores["model"]) == sorted(board.index)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "href" not in report and "<a" not in report


def test_a_link_column_alone_is_read_by_its_text(tmp_path):
    board = _board(8, 4, seed=5)
    t = board.reset_index()
    t["model"] = [f'<a href="https://x.org/{m}">{m}</a>' for m in board.index]
    t.to_csv(tmp_path / "links.csv", index=False)
    res = audit(tmp_path / "links.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scores["model"]) == sorted(board.index)
    assert any("HTML links" in n for n in res.notes)
