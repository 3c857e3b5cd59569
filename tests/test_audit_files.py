"""``effstats audit`` on leaderboard files as users export them and the Python API behind it.

Every behaviour is tested on small synthetic files; the public HELM Lite and Open LLM Leaderboard (v1) tables are
read in place from ``shared/data/leaderboards`` beside the checkout (or ``$EFFSTATS_DATA/../leaderboards``) when
present.
"""
from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats import reliability as R
from effstats._shared import _name_list
from effstats.cli import main, read_helm_json, read_openllm_csv, read_openllm_json, read_scores
from effstats.reliability import AuditResult, audit
from effstats._published import _detect_published
from effstats.reliability._render import _labels


def _shared() -> Path | None:
    here = Path(__file__).resolve().parents[2] / "shared" / "data" / "leaderboards"
    env = os.environ.get("EFFSTATS_DATA")
    for p in ([Path(env) / "leaderboards", Path(env).parent / "leaderboards"] if env else []) + [here]:
        if (p / "helm_lite" / "leaderboard.tsv").exists():
            return p
    return None


SHARED = _shared()
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared/data/leaderboards not found beside the checkout")
FAST = ["--n-boot", "40", "--no-progress"]


def _err_lines(capsys) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def _table(n: int = 10, k: int = 5, seed: int = 0, sd: float = 0.05) -> pd.DataFrame:
    """Models × tasks, rounded to 3 decimals, the first model best on average."""
    rng = np.random.default_rng(seed)
    x = np.clip(np.linspace(0.85, 0.3, n)[:, None] + rng.normal(0, sd, (n, k)), 0, 1).round(3)
    return pd.DataFrame(x, index=pd.Index([f"m{i}" for i in range(n)], name="model"),
                        columns=[f"T{j}" for j in range(k)])


def _mean_leader_differs_from_mwr(n: int = 8) -> pd.DataFrame:
    """A table whose mean and Mean Win Rate name different leaders: 'star' wins one task by far, loses the rest."""
    t = _table(n, 6, seed=3, sd=0.0)
    t.loc["m0"] = [0.80, 0.80, 0.80, 0.80, 0.80, 0.80]
    t.loc["star"] = [0.79, 0.79, 0.79, 0.79, 0.79, 1.0]
    return t


# ---------------------------------------------------------------------------- 1. published aggregates by value / name
def test_mean_under_another_name_is_the_published_aggregate(tmp_path):
    t = _mean_leader_differs_from_mwr()
    t.insert(0, "hf_open_llm_v1", t.mean(axis=1).round(2))  # 2 decimals while the tasks have 3
    p = tmp_path / "export.csv"
    t.to_csv(p)
    wide, pub = read_scores(p)
    assert "hf_open_llm_v1" not in wide.columns and list(wide.columns) == [f"T{j}" for j in range(6)]
    assert pub.attrs["info"]["column"] == "hf_open_llm_v1" and pub.attrs["kind"] == "mean"
    assert pub.attrs["info"]["rule"] == "exact"
    res = audit(p, n_boot=40, progress=False)
    assert res.settings["aggregate"] == "mean" and res.leader == "star"
    assert R.mean_win_rate(wide).idxmax() == "m0"  # ranked as a win rate, another model would lead
    assert res.published["column"] == "hf_open_llm_v1" and res.published["kendall_tau"] > 0.99
    assert "hf_open_llm_v1" not in set(res.scenarios.scenario) and res.settings["n_scenarios"] == 6


def test_win_rate_under_another_name_ranks_as_mwr_with_its_tie_rule(tmp_path):
    t = _table(12, 5, seed=1)
    t.iloc[3:6, 0] = 0.5  # ties: half credit and strict win rates differ
    t.insert(0, "board", R.mean_win_rate(t, ties="half").round(3))
    found = _detect_published(t)
    assert [(f["column"], f["kind"], f["ties"], f["rule"]) for f in found] == [("board", "mwr", "half", "exact")]
    p = tmp_path / "t.csv"
    t.to_csv(p)
    res = audit(p, n_boot=40, progress=False)
    assert (res.settings["aggregate"], res.settings["ties"]) == ("mwr", "half")
    assert res.published["max_abs_diff"] <= 5e-4


def test_column_named_like_the_table_is_the_aggregate(tmp_path):
    """A column carrying the file's name is the published aggregate even when it matches no recomputation
    (a weighted mean off by more than rounding, say): it ranks as the aggregate it follows best."""
    t = _table(9, 4, seed=2)
    noise = np.random.default_rng(7).normal(0, 0.01, len(t))  # 20x the rounding: no exact weighted mean
    t.insert(0, "helm_lite", (t.to_numpy() @ [0.4, 0.3, 0.2, 0.1] + noise).round(3))
    p = tmp_path / "helm_lite.tsv"
    t.to_csv(p, sep="\t")
    wide, pub = read_scores(p)
    assert "helm_lite" not in wide.columns and pub.attrs["info"]["rule"] == "name"
    q = tmp_path / "other.tsv"
    t.to_csv(q, sep="\t")
    wide, pub = read_scores(q)  # same values, another file name: a scenario like the others
    assert "helm_lite" in wide.columns and pub is None


@pytest.mark.parametrize("case", ["correlated scenario", "mean plus noise", "few models", "two other columns"])
def test_scenarios_are_not_taken_for_aggregates(case):
    rng = np.random.default_rng(5)
    t = _table(12, 5, seed=4)
    if case == "correlated scenario":
        t["S"] = (t.mean(axis=1) * 0.9 + rng.normal(0, 0.01, len(t))).round(3)  # r ~ 0.99, not a recomputation
    elif case == "mean plus noise":
        t["S"] = (t.mean(axis=1) + rng.normal(0, 0.015, len(t))).round(3)  # off by more than rounding; r < 0.999
    elif case == "few models":
        t = t.iloc[:4]
        t["S"] = t.mean(axis=1).round(3)  # equal by construction, but 4 models are too few to tell
    else:
        t = t.iloc[:, :2]
        t["S"] = t.mean(axis=1).round(3)
    ok = t["S"].notna()
    if case in ("correlated scenario", "mean plus noise"):  # the premise: close to the mean, yet below the rule
        assert 0.98 < np.corrcoef(t["S"][ok], t.drop(columns="S").mean(axis=1)[ok])[0, 1] < 0.999
    assert _detect_published(t) == []


def test_exact_rule_tolerance_is_the_printed_rounding():
    """Within 0.51 units of the column's last decimal (plus the inputs' rounding for a mean): an aggregate; a
    shift of 2 units on one model breaks the exact rule (the loose rule needs r >= 0.999 and stays off on
    5 models with a deliberately noisy column)."""
    t = _table(6, 4, seed=6)
    mean = t.mean(axis=1)
    t["agg"] = mean.round(2)
    assert [f["rule"] for f in _detect_published(t)] == ["exact"]
    t["agg"] = mean.round(2) + np.where(np.arange(6) == 2, 0.02, 0)
    hits = _detect_published(t)
    assert all(f["rule"] != "exact" for f in hits)


def test_dataframe_api_finds_or_takes_the_published_column():
    t = _table(8, 5, seed=7)
    t.insert(0, "Score", t.mean(axis=1).round(3))
    res = audit(t, n_boot=30, progress=False)
    assert res.published["column"] == "Score" and "Score" not in set(res.scenarios.scenario)
    res = audit(t, published="Score", n_boot=30, progress=False)
    assert res.published["column"] == "Score" and res.settings["aggregate"] == "mean"
    with pytest.raises(ValueError, match="published: column 'nope'"):
        audit(t, published="nope", n_boot=30, progress=False)


# ---------------------------------------------------------------------------- 2. pandas' to_csv, numeric models, ';'
def test_pandas_index_without_model_column_is_refused(tmp_path, capsys):
    t = _table(6, 4).reset_index(drop=True)  # no model names at all
    p = tmp_path / "scores.csv"
    t.to_csv(p)  # pandas' default: an unnamed 0..n-1 index column
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), *FAST]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and "--model" in err[0] and "'T0'" in err[0] and "holds numbers" in err[0]


def test_pandas_index_before_a_model_column_is_skipped(tmp_path):
    t = _table(6, 4).reset_index()
    p = tmp_path / "scores.csv"
    t.to_csv(p)
    wide, _ = read_scores(p)
    assert list(wide.index) == [f"m{i}" for i in range(6)] and list(wide.columns) == ["T0", "T1", "T2", "T3"]
    # an explicit --model may name a numeric column (model ids)
    t.insert(0, "id", np.arange(100, 106))
    t.drop(columns="model").to_csv(p, index=False)
    wide, _ = read_scores(p, model="id", explicit=["--model"])
    assert list(wide.index) == [str(i) for i in range(100, 106)]


def test_semicolon_files_with_decimal_commas(tmp_path):
    t = _table(5, 3)
    p = tmp_path / "eu.csv"
    p.write_text("Model;" + ";".join(t.columns) + "\n" + "\n".join(
        m + ";" + ";".join(f"{v:.3f}".replace(".", ",") for v in row) for m, row in zip(t.index, t.to_numpy())))
    wide, _ = read_scores(p)
    assert list(wide.columns) == ["T0", "T1", "T2"]
    np.testing.assert_allclose(wide.to_numpy(dtype=float), t.to_numpy())


# ---------------------------------------------------------------------------- 3. duplicated models
def _with_duplicates(tmp_path) -> Path:
    t = _table(6, 4, seed=8)
    again = t.loc[["m1", "m3"]] - 0.1  # resubmissions, listed after the first runs
    p = tmp_path / "dup.csv"
    pd.concat([t, again]).to_csv(p)
    return p


@pytest.mark.parametrize("policy, expect", [("last", -0.1), ("first", 0.0), ("mean", -0.05)])
def test_duplicates_policies(tmp_path, policy, expect):
    p = _with_duplicates(tmp_path)
    base = _table(6, 4, seed=8)
    with pytest.warns(UserWarning, match=r"--duplicates: 2 model\(s\) appear in more than one row"):
        wide, _ = read_scores(p, duplicates=policy)
    assert len(wide) == 6
    np.testing.assert_allclose(wide.loc["m1"].to_numpy(float), base.loc["m1"].to_numpy() + expect, atol=1e-9)
    np.testing.assert_allclose(wide.loc["m2"].to_numpy(float), base.loc["m2"].to_numpy())


def test_duplicates_cli_default_warns_and_error_refuses(tmp_path, capsys):
    p = _with_duplicates(tmp_path)
    out = tmp_path / "o"
    assert main(["audit", str(p), "--out", str(out), *FAST]) == 0
    err = [e for e in _err_lines(capsys) if "warning" in e]
    assert len(err) == 1 and "2 model(s) appear in more than one row" in err[0] and "kept the last" in err[0]
    # "last" is the file's order, whatever a date column says: the warning and --help say so
    assert "kept the last row of each in file order (no date column is read: sort the rows to keep the latest)" \
        in err[0]
    assert main(["audit", "--help"]) == 0
    assert "keep the last row in file order" in " ".join(capsys.readouterr().out.split())
    assert "2 model(s) appear in more than one row" in (out / "report.md").read_text()
    assert main(["audit", str(p), "--out", str(out), "--duplicates", "error", *FAST, "--force"]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and err[0].startswith("effstats audit: error: SCORES: 2 model(s)")
    assert main(["audit", str(p), "--out", str(out), "--duplicates", "latest", *FAST]) == 2
    assert "--duplicates" in _err_lines(capsys)[0]


def _weights_table(tmp_path) -> Path:
    """ImageNet's export in small: one row per weight, its 'Model' the architecture; the best entry is the first of
    its architecture's two rows."""
    p = tmp_path / "weights.tsv"
    p.write_text("Weight\tModel\ta\tb\tc\n"
                 "vit_e2e\tvit\t0.9\t0.95\t0.92\n"
                 "vit_linear\tvit\t0.5\t0.55\t0.52\n"
                 "res_v1\tres\t0.7\t0.6\t0.65\n"
                 "res_v2\tres\t0.8\t0.7\t0.75\n"
                 "eff\teff\t0.6\t0.65\t0.7\n")
    return p


def test_rows_a_name_tells_apart_are_refused_by_default_not_merged(tmp_path, capsys):
    """Rows of a repeated model that a text column naming every row tells apart are distinct entries: keeping the
    last row of each would audit a ranking the file does not hold (its best entry dropped). Without --duplicates the
    table is refused in one line naming both ways on; with either, it is read."""
    p = _weights_table(tmp_path)
    said = (r"2 value\(s\) of column 'Model' appear in more than one row .*pass --model 'Weight' to audit every row, "
            r"or --duplicates last")
    with pytest.raises(ValueError, match=said):
        read_scores(p)
    with pytest.raises(ValueError, match=said):  # a frame read from the file, as the file
        audit(pd.read_csv(p, sep="\t"), n_boot=20, progress=False)
    out = tmp_path / "o"
    assert main(["audit", str(p), "--out", str(out), *FAST]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and "--model 'Weight'" in err[0] and "--duplicates last" in err[0]
    assert not (out / "report.md").exists()
    wide, _ = read_scores(p, model="Weight", explicit=["--model"])
    assert len(wide) == 5 and wide.mean(axis=1).idxmax() == "vit_e2e"
    with pytest.warns(UserWarning, match="kept the last row of each"):
        wide, _ = read_scores(p, duplicates="last")
    assert list(wide.index) == ["vit", "res", "eff"] and wide.loc["vit", "a"] == 0.5
    assert main(["audit", str(p), "--out", str(out), "--model", "Weight", *FAST]) == 0
    assert "5 models" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("run", [lambda i: f"2023-12-1{i}T04-42-16.291896", lambda i: f"{i}a3f9c1e0b"])
def test_resubmissions_told_apart_by_a_run_column_are_read_by_default(tmp_path, run, capsys):
    """A column unique to every row that holds dates or commit hashes tells runs of one model apart: those rows are
    resubmissions, read as before (the last row of each kept, with the warning), and the column is not offered as
    the model names."""
    p = tmp_path / "runs.tsv"
    rows = [("x", 0.4, 0.6), ("x", 0.5, 0.6), ("y", 0.2, 0.4), ("z", 0.5, 0.3)]
    p.write_text("model\trun\ta\tb\n" + "".join(f"{m}\t{run(i)}\t{a}\t{b}\n" for i, (m, a, b) in enumerate(rows)))
    with pytest.warns(UserWarning, match="kept the last row of each") as said:
        wide, _ = read_scores(p)
    assert list(wide.index) == ["x", "y", "z"] and wide.loc["x", "a"] == 0.5
    assert not any("pass --model" in str(w.message) for w in said)
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), *FAST]) == 0


@needs_shared
def test_imagenet_weights_export_is_refused_by_default_and_read_by_weight():
    """The torchvision export as found (112 weights of 79 architectures): merging by 'Model' dropped ViT-H/14's
    SWAG E2E weight, the table's best entry."""
    src = SHARED / "imagenet" / "leaderboard.tsv"
    with pytest.raises(ValueError, match=r"27 value\(s\) of column 'Model' .*pass --model 'Weight'"):
        read_scores(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        wide, published = read_scores(src, model="Weight", explicit=["--model"])
    assert len(wide) == 112
    assert published.idxmax() == "ViT_H_14_Weights.IMAGENET1K_SWAG_E2E_V1"


def test_every_reader_takes_duplicates(tmp_path):
    # Open LLM CSV export: the same model at two precisions
    p = tmp_path / "ol.csv"
    p.write_text("fullname,Average ⬆️,ARC,HellaSwag,MMLU,TruthfulQA,Winogrande,GSM8K\n"
                 "a,60,60,60,60,60,60,60\nb,50,50,50,50,50,50,50\na,40,40,40,40,40,40,40\n")
    with pytest.warns(UserWarning, match="1 model"):
        wide, pub = read_openllm_csv(p)
    assert wide.loc["a", "ARC"] == pytest.approx(0.4) and pub["a"] == pytest.approx(0.4)
    with pytest.warns(UserWarning, match="kept the first"):
        wide, pub = read_openllm_csv(p, duplicates="first")
    assert wide.loc["a", "ARC"] == pytest.approx(0.6) and pub["a"] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="SCORES: 1 model"):
        read_openllm_csv(p, duplicates="error")
    # Open LLM results files: two runs of one model, the later file name is the later run
    folder = tmp_path / "results"
    for i, (name, acc) in enumerate([("org/a", 0.5), ("org/a", 0.7), ("org/b", 0.6)]):
        d = folder / name
        d.mkdir(parents=True, exist_ok=True)
        (d / f"results_2024-01-0{i + 1}.json").write_text(json.dumps(
            {"config_general": {"model_name": name},
             "results": {"harness|arc:challenge|25": {"acc_norm": acc}, "harness|gsm8k|5": {"acc": acc}}}))
    with pytest.warns(UserWarning, match="1 model"):
        assert read_openllm_json(folder).loc["org/a", "ARC"] == 0.7
    with pytest.warns(UserWarning, match="averaged"):
        assert read_openllm_json(folder, duplicates="mean").loc["org/a", "ARC"] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="SCORES: 1 model"):
        read_openllm_json(folder, duplicates="error")
    # HELM groups JSON
    rows = [[{"value": m}, {"value": 0.5}, {"value": a}, {"value": b}] for m, a, b in
            [("x", 0.1, 0.2), ("y", 0.3, 0.4), ("x", 0.5, 0.6)]]
    h = tmp_path / "core.json"
    h.write_text(json.dumps([{"title": "Accuracy", "header": [{"value": "Model/adapter"}, {"value": "Mean win rate"},
                                                               {"value": "A - EM"}, {"value": "B - EM"}],
                              "rows": rows}]))
    with pytest.warns(UserWarning, match="1 model"):
        wide, _ = read_helm_json(h)
    assert wide.loc["x", "A - EM"] == 0.5
    with pytest.warns(UserWarning, match="kept the first"):
        assert read_helm_json(h, duplicates="first")[0].loc["x", "A - EM"] == 0.1
    with pytest.raises(ValueError, match="--duplicates"):
        read_helm_json(h, duplicates="newest")


# ---------------------------------------------------------------------------- 4. too few models for τ
def test_few_models_get_no_tau_based_drop_or_review_advice(tmp_path):
    t = pd.DataFrame({"A": [0.9, 0.7, 0.5, 0.3], "B": [0.8, 0.6, 0.4, 0.2], "C": [0.85, 0.65, 0.45, 0.25],
                      "D": [0.2, 0.4, 0.6, 0.8]}, index=pd.Index(list("wxyz"), name="model"))
    res = audit(t, n_boot=100, progress=False)
    assert set(res.scenarios.tau_full_vs_without.round(6)) <= {1.0, 2 / 3, 1 / 3, 0.0, -1 / 3, -2 / 3, -1.0}
    assert (res.scenarios.tau_with_rest == 1).sum() >= 2 and (res.scenarios.tau_with_rest == -1).sum() == 1
    assert res.recommendations[0].startswith("**Too few models for τ-based advice**: with 4 models")
    assert not any(r.startswith(("**Candidates to drop", "**Review", "**Scenarios disagree")) for r in
                   res.recommendations)
    t5 = pd.concat([t, pd.DataFrame({"A": [0.1], "B": [0.0], "C": [0.05], "D": [0.95]}, index=["v"])])
    assert not any("Too few models" in r for r in audit(t5, n_boot=100, progress=False).recommendations)


# ---------------------------------------------------------------------------- 5. HELM's tie rule by default
def test_ties_auto_is_half_for_helm_and_strict_otherwise(tmp_path):
    t = _table(8, 4, seed=9)
    t.iloc[2:5, 1] = 0.6
    rows = [[{"value": m}, {"value": None}] + [{"value": float(v)} for v in r] for m, r in zip(t.index, t.to_numpy())]
    h = tmp_path / "core.json"
    h.write_text(json.dumps([{"title": "Accuracy", "header": [{"value": "Model/adapter"}, {"value": "Mean win rate"}]
                              + [{"value": f"{c} - EM"} for c in t.columns], "rows": rows}]))
    assert audit(h, n_boot=30, progress=False).settings["ties"] == "half"
    assert audit(h, ties="strict", n_boot=30, progress=False).settings["ties"] == "strict"
    plain = tmp_path / "plain.csv"
    t.to_csv(plain)
    assert audit(plain, n_boot=30, progress=False).settings["ties"] == "strict"
    helm_tsv = tmp_path / "helm.tsv"
    t.insert(0, "Mean win rate", R.mean_win_rate(t, ties="half").round(3))
    t.rename_axis("Model").to_csv(helm_tsv, sep="\t")
    res = audit(helm_tsv, n_boot=30, progress=False)
    assert res.settings["ties"] == "half" and res.published["max_abs_diff"] <= 5e-4
    out = tmp_path / "o"
    assert main(["audit", str(h), "--out", str(out), *FAST]) == 0
    assert "Mean Win Rate** (ties: half)" in (out / "report.md").read_text()


# ---------------------------------------------------------------------------- 6. the Python API
def test_audit_result_tables_figures_and_rendering(tmp_path):
    t = _table(10, 5, seed=10)
    res = audit(t, n_boot=40, progress=False, source="demo")
    assert isinstance(res, AuditResult)
    for name in ("scores", "reliability", "scenarios", "efficiency_scenarios", "clones", "removals"):
        assert isinstance(getattr(res, name), pd.DataFrame)
    assert res.scores["rank"].iloc[0] == 1 and res.leader == res.scores["model"].iloc[0]
    assert set(res.figures) == {"rank_intervals.png", "efficiency_scenarios.png"}
    html = res._repr_html_()
    assert html.startswith("<div") and "data:image/png;base64," in html
    page = res.to_html(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text() == page and page.startswith("<!DOCTYPE html>")
    md = res.to_markdown()
    assert md.startswith("# Benchmark reliability audit: demo") and "![rank intervals](rank_intervals.png)" in md
    assert not (tmp_path / "nothing").exists()  # computing writes nothing
    path = res.save(tmp_path / "saved")
    assert path.read_text() == md and (tmp_path / "saved" / "rank_intervals.png").read_bytes()[:4] == b"\x89PNG"


def _png(fig, dpi=110) -> np.ndarray:
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return np.asarray(Image.open(buf))


def test_figures_titles_are_where_matplotlib_places_them(monkeypatch):
    from effstats.reliability import _render

    res = audit(_table(10, 5, seed=10), n_boot=40, progress=False)
    pinned = {k: _png(f) for k, f in res._figures(dpi=110).items()}
    shown = {k: _png(f, dpi=80) for k, f in res.figures.items()}
    monkeypatch.setattr(_render, "_lay_out", lambda fig, ax: fig.tight_layout())  # matplotlib's own placement
    assert all(np.array_equal(pinned[k], _png(f)) for k, f in res._figures(dpi=110).items())
    assert all(np.array_equal(shown[k], _png(f, dpi=80)) for k, f in res.figures.items())
    monkeypatch.undo()
    # a y axis with an offset text above it: the title is moved clear of it, as matplotlib moves it
    base = 0.999991
    curve = pd.DataFrame({"objective": "kendall", "size": [1, 2, 4, 8], "dior": base + 1e-7 * np.arange(4),
                          "ci_low": base + 1e-7 * np.arange(-1, 3), "ci_high": base + 1e-7 * np.arange(1, 5)})
    fig = _render._plot_curve(curve, "Ranking reliability vs number of scenarios", "scenarios", base, dpi=110)
    ax = fig.axes[0]
    _png(fig)
    assert ax.yaxis.offsetText.get_text()
    assert ax.title.get_window_extent().y0 >= ax.yaxis.offsetText.get_window_extent().y1 - 1


def test_cli_writes_what_the_api_computes(tmp_path):
    t = _table(10, 5, seed=11)
    p = tmp_path / "board.csv"
    t.to_csv(p)
    out = tmp_path / "cli"
    assert main(["audit", str(p), "--out", str(out), "--n-boot", "60", "--no-progress", "--seed", "3"]) == 0
    res = audit(p, n_boot=60, seed=3, progress=False)
    assert (out / "report.md").read_text() == res.to_markdown()
    pd.testing.assert_frame_equal(pd.read_csv(out / "scores.csv"), res.scores, check_dtype=False)
    for f in ("report.html", "reliability.csv", "scenarios.csv", "efficiency_scenarios.csv", "rank_intervals.png",
              "efficiency_scenarios.png"):
        assert (out / f).exists(), f


def test_save_replaces_links_in_out_and_never_writes_through_them(tmp_path):
    res = audit(_table(10, 5, seed=12), n_boot=40, progress=False)
    out = tmp_path / "out"
    out.mkdir()
    victims = {}
    for name in ("report.md", "report.html", "scores.csv", "rank_intervals.png"):
        victims[name] = tmp_path / f"victim_{name}"
        victims[name].write_text("keep")
        (out / name).symlink_to(victims[name])
    for force in (False, True):  # links no audit made: refused, with or without force, and left as they are
        with pytest.raises(ValueError, match="which no earlier audit wrote there"):
            res.save(out, force=force)
        assert all((out / name).is_symlink() for name in victims)
    # links put in place of the files an audit recorded writing: replaced, never written through
    for name in victims:
        (out / name).unlink()
    res.save(out)
    for name in victims:
        (out / name).unlink()
        (out / name).symlink_to(victims[name])
    res.save(out, force=True)
    for name, victim in victims.items():
        assert victim.read_text() == "keep", name
        assert not (out / name).is_symlink()
    assert (out / "report.md").read_text() == res.to_markdown()
    assert (out / "rank_intervals.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == []


def test_a_second_audit_into_a_folder_being_written_waits_for_its_lock(tmp_path, capsys, monkeypatch):
    """Two audits into one folder at once: the second, started while the first is midway through putting its
    report in place, waits for the folder's lock (here refused once its wait is over, in one line naming --out)
    and never writes files of its own among the first one's."""
    import effstats._user_files as user_files

    board, other = tmp_path / "board.csv", tmp_path / "other.csv"
    _table(8, 4, seed=1).to_csv(board)
    _table(8, 4, seed=1).rename(index=lambda m: f"X{m}").to_csv(other)  # the same scores, every model renamed
    out = tmp_path / "out"
    assert main(["audit", str(board), "--out", str(out), *FAST]) == 0  # an earlier report, which both replace
    monkeypatch.setattr(user_files, "LOCK_WAIT", 0.2)
    real, seen, second = os.replace, [], []

    def replace(src, dst, *a, **k):
        real(src, dst, *a, **k)
        seen.append(Path(dst).name)
        if len(seen) == 3 and not second:  # the first's journal and two of its files in place, the rest not yet
            second.append(main(["audit", str(board), "--out", str(out), *FAST, "--force"]))
            second.append(capsys.readouterr().err)
    monkeypatch.setattr(os, "replace", replace)
    assert main(["audit", str(other), "--out", str(out), *FAST, "--force"]) == 0
    assert second[0] == 2 and second[1].strip() == (
        f"effstats audit: error: --out: another effstats command is writing into {out} (.effstats.lock is held); run "
        "this one when it has finished"), second
    for name in ("scores.csv", "report.md", "report.html"):  # the first audit's report, whole
        text = (out / name).read_text()
        assert "Xm0" in text and not re.search(r"(?<!X)\bm\d\b", text), name
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["audit", str(board), "--out", str(out), *FAST, "--force"]) == 0  # once the first has finished
    assert "Xm0" not in (out / "scores.csv").read_text() + (out / "report.md").read_text()


def test_audit_never_writes_over_its_input_or_files_it_did_not_write(tmp_path, capsys):
    t = _table(10, 5, seed=13)
    out = tmp_path / "out"
    out.mkdir()
    t.to_csv(out / "scores.csv")  # the input, under a name the report writes
    before = (out / "scores.csv").read_bytes()
    for force in ([], ["--force"]):
        assert main(["audit", str(out / "scores.csv"), "--out", str(out), *FAST, *force]) == 2
        assert "is the audited file" in _err_lines(capsys)[0]
        assert (out / "scores.csv").read_bytes() == before and not (out / "report.md").exists()

    board = tmp_path / "board.csv"
    t.to_csv(board)
    mine = {"report.md": "my notes", "report.html": "<p>mine</p>", "reliability.csv": "mine", "keep.txt": "mine"}
    for name, text in mine.items():
        (tmp_path / "o2").mkdir(exist_ok=True)
        (tmp_path / "o2" / name).write_text(text)
    for force in ([], ["--force"]):  # refused with or without --force, naming the file, and left as it is
        assert main(["audit", str(board), "--out", str(tmp_path / "o2"), *FAST, *force]) == 2
        err = _err_lines(capsys)
        assert len(err) == 1 and "holds report.md, which no earlier audit wrote there" in err[0], err
        assert {n: (tmp_path / "o2" / n).read_text() for n in mine} == mine
        assert not (tmp_path / "o2" / "scores.csv").exists()
    for n in ("report.md", "report.html", "reliability.csv"):
        (tmp_path / "o2" / n).unlink()
    assert main(["audit", str(board), "--out", str(tmp_path / "o2"), *FAST]) == 0
    assert (tmp_path / "o2" / "keep.txt").read_text() == "mine"  # a file of another name is never touched
    assert (tmp_path / "o2" / "report.md").read_text().startswith("# Benchmark reliability audit")
    # a record that is a link names no file an audit wrote
    o4 = tmp_path / "o4"
    o4.mkdir()
    (tmp_path / "fake.json").write_text(json.dumps({"format": "effstats.audit/1", "files": ["report.md"]}))
    (o4 / ".effstats_audit.json").symlink_to(tmp_path / "fake.json")
    (o4 / "report.md").write_text("my notes")
    assert main(["audit", str(board), "--out", str(o4), *FAST, "--force"]) == 2
    assert "which no earlier audit wrote there" in _err_lines(capsys)[0]
    assert (o4 / "report.md").read_text() == "my notes"

    # what an audit wrote, a later audit replaces with --force, and only with it; its files not written again are
    # removed
    o3 = tmp_path / "o3"
    assert main(["audit", str(board), "--out", str(o3), *FAST]) == 0
    with open(o3 / "report.md", "a") as f:
        f.write("my notes\n")  # an edit by hand
    edited = {p.name: p.read_bytes() for p in o3.iterdir()}
    assert main(["audit", str(board), "--out", str(o3), *FAST, "--seed", "4"]) == 2
    assert _err_lines(capsys) == [f"effstats audit: error: --out: {str(o3)!r} already holds an earlier audit's report "
                                  "(report.md); name another folder with --out, or pass --force to replace it"]
    assert {p.name: p.read_bytes() for p in o3.iterdir()} == edited
    with pytest.raises(ValueError, match="already holds an earlier audit's report"):
        audit(board, out=o3, n_boot=20, progress=False)
    assert {p.name: p.read_bytes() for p in o3.iterdir()} == edited
    (o3 / "rank_switch.png").write_bytes(b"mine")  # the user's file, named like an output of per-example audits
    stale = o3 / "efficiency_examples.csv"
    stale.write_text("an earlier audit's")
    record = json.loads((o3 / ".effstats_audit.json").read_text())
    (o3 / ".effstats_audit.json").write_text(json.dumps({**record, "files": record["files"] + [stale.name]}))
    assert main(["audit", str(board), "--out", str(o3), *FAST, "--seed", "4", "--force"]) == 0
    assert not stale.exists() and (o3 / "rank_switch.png").read_bytes() == b"mine"
    assert "efficiency_examples.csv" not in json.loads((o3 / ".effstats_audit.json").read_text())["files"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_prints_one_line_and_no_traceback(tmp_path, jobs):
    """SIGINT while the audit imports its modules, and while it resamples (with --jobs 2 also in the forked
    process): one line, exit status 130, no file half-written."""
    import signal
    import subprocess
    import sys
    import time

    board = tmp_path / "board.csv"
    _table(80, 40, seed=0).to_csv(board)  # 100,000 resamples: many seconds, stopped after 3
    for delay in (1.0, 3.0):  # the first while the modules are imported, after Python has started
        out = tmp_path / f"out{delay}"
        p = subprocess.Popen([sys.executable, "-m", "effstats", "audit", str(board), "--out", str(out), "--n-boot",
                              "100000", "--no-progress", "--jobs", jobs], stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 130, err
        assert err.splitlines() == ["effstats audit: interrupted; files already written are complete, nothing "
                                    "half-written"], err
        assert not out.exists() or not [f for f in out.iterdir() if f.name.endswith(".tmp")]


def test_api_bad_arguments_name_the_option(tmp_path):
    t = _table(6, 3)
    for kw, match in [(dict(ties="third"), "--ties"), (dict(duplicates="x"), "--duplicates"),
                      (dict(aggregate="median"), "--aggregate"), (dict(out=3), "--out"),
                      (dict(published=[1, 2]), "published")]:
        with pytest.raises(ValueError, match=match):
            audit(t, n_boot=20, progress=False, **kw)
    with pytest.raises(ValueError, match="--format"):
        audit(tmp_path, format="xml", progress=False)


# ---------------------------------------------------------------------------- 7. report cosmetics
def test_labels_never_merge_distinct_names():
    names = ["organisation/very-long-model-name-for-chat-v1-instruct-base", "organisation/very-long-model-name-for"
             "-chat-v1-instruct-tuned", "short", "organisation/very-long-model-name-for-chat-v1-instruct-base"]
    lab = _labels(names, width=40)
    assert all(len(s) <= 40 for s in lab) and lab[0] != lab[1] and lab[0] == lab[3] and lab[2] == "short"
    same_ends = ["a" * 30 + str(i) + "b" * 30 for i in range(3)]  # only the middle differs
    assert len(set(_labels(same_ends, 20))) == 3


def test_name_lists_are_capped():
    assert _name_list([f"m{i}" for i in range(22)]) == "m0, m1, m2, m3, m4, m5, m6, m7 … and 14 more"
    assert _name_list(["a", "b"]) == "a, b"


def test_percent_table_is_divided_by_100_with_a_note(tmp_path):
    t = (_table(8, 4, seed=12) * 100).round(1)
    t.insert(0, "Average", t.mean(axis=1).round(1))
    p = tmp_path / "pct.csv"
    t.to_csv(p)
    res = audit(p, n_boot=30, progress=False)
    assert res.scores["mean"].max() <= 1 and res.scores["published"].max() <= 1
    assert res.published["max_abs_diff"] < 1e-3 and res.published["scale"] == 1.0
    np.testing.assert_allclose(res.scores.set_index("model")["mean"].reindex(t.index),
                               t.drop(columns="Average").mean(axis=1) / 100)
    assert "model_quality" in set(res.reliability.objective)


def test_reliability_row_left_out_is_said(tmp_path):
    t = _table(8, 4, seed=13) * 1000 + 500  # Elo-like ratings: not fractions, not percent
    t.insert(0, "Average", t.mean(axis=1).round(3))
    res = audit(t, n_boot=30, progress=False)
    assert res.settings["aggregate"] == "mean" and "model_quality" not in set(res.reliability.objective)
    assert list(res.reliability.objective) == ["kendall", "weighted_tau", "best_model"]


def test_leader_ahead_of_everyone_is_said_without_zero_counts():
    t = _table(8, 6, seed=14, sd=0.01)
    t.loc["m0"] = 0.99  # ahead everywhere
    res = audit(t, n_boot=60, progress=False)
    assert res.leader == "m0" and (res.scores.p_leader_ahead.iloc[1:] >= 0.95).all()


def test_leader_group_lists_at_most_eight_names():
    rng = np.random.default_rng(15)
    t = pd.DataFrame(rng.normal(0.5, 0.1, (24, 4)).round(3), index=[f"model-{i:02d}" for i in range(24)],
                     columns=list("ABCD"))
    res = audit(t, n_boot=60, progress=False)
    group = res.scores.model[res.scores.p_leader_ahead < 0.95].tolist()  # NaN for the leader itself
    assert len(group) > 8  # the premise
    lead = [r for r in res.recommendations if r.startswith("**The leader**")][0]
    assert sum(m in lead for m in group) == 8 and f"… and {len(group) - 8} more" in lead


# ---------------------------------------------------------------------------- the public files
@needs_shared
def test_helm_lite_real_file_under_its_own_and_another_name(tmp_path):
    src = SHARED / "helm_lite" / "leaderboard.tsv"
    res = audit(src, n_boot=40, progress=False)
    assert res.published["column"] == "Mean win rate" and res.settings["ties"] == "half"
    assert res.leader == "GPT-4o (2024-05-13)" and res.published["kendall_tau"] > 0.99
    renamed = tmp_path / "helm_lite.tsv"  # the aggregate under the benchmark's name, as some exports write it
    renamed.write_text(src.read_text(encoding="utf-8").replace("Mean win rate", "helm_lite", 1), encoding="utf-8")
    res2 = audit(renamed, n_boot=40, progress=False)
    assert res2.published["column"] == "helm_lite" and res2.published["kind"] == "mwr"
    assert res2.published["rule"] == "close" and res2.settings["ties"] == "half"
    assert "helm_lite" not in set(res2.scenarios.scenario) and res2.settings["n_scenarios"] == 10
    assert res2.leader == res.leader and res2.published["kendall_tau"] == pytest.approx(res.published["kendall_tau"])
    assert not any("helm_lite" in r for r in res2.recommendations if r.startswith("**Candidates to drop"))


@needs_shared
def test_open_llm_real_file_under_another_name_with_duplicates(tmp_path, capsys):
    src = SHARED / "openllm" / "leaderboard.tsv"
    renamed = tmp_path / "hf_open_llm_v1.tsv"
    text = src.read_text(encoding="utf-8")
    head, rest = text.split("\n", 1)
    renamed.write_text(head.replace("\tAverage\t", "\thf_open_llm_v1\t") + "\n" + rest, encoding="utf-8")
    out = tmp_path / "o"
    assert main(["audit", str(renamed), "--out", str(out), *FAST]) == 0
    err = [e for e in _err_lines(capsys) if "warning" in e]
    assert len(err) == 1 and "13 model(s) appear in more than one row" in err[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = audit(renamed, n_boot=40, progress=False)
    assert res.published["column"] == "hf_open_llm_v1" and res.published["rule"] == "exact"
    assert res.settings["aggregate"] == "mean" and res.settings["n_models"] == 87
    assert res.leader == "cloudyu/Yi-34Bx2-MoE-60B"  # the published leader
    assert res.published["kendall_tau"] > 0.99 and res.published["max_abs_diff"] < 1e-4
    assert res.scores["mean"].max() <= 1 and res.published["scale"] == 1.0  # percent read as fractions


def test_a_category_column_first_is_not_taken_for_the_models(tmp_path, capsys):
    # bigcode's table: a type emoji first (3 values over 41 rows) and the unique model names second
    rng = np.random.default_rng(0)
    rows = [f"{'🟢🔶🔴'[i % 3]},model-{i},{rng.random():.3f},{rng.random():.3f},{rng.random():.3f}" for i in range(12)]
    path = tmp_path / "board.csv"
    path.write_text("T,Models,humaneval,mbpp,ds1000\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert main(["audit", str(path), "--out", str(tmp_path / "o"), *FAST]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and "--model" in err[0] and "'Models'" in err[0]
    assert main(["audit", str(path), "--model", "Models", "--out", str(tmp_path / "o"), *FAST]) == 0
    assert "12 models" in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")


@needs_shared
def test_bigcode_real_file_names_the_model_column(tmp_path, capsys):
    src = SHARED / "bigcode" / "leaderboard.tsv"
    assert main(["audit", str(src), "--out", str(tmp_path / "o"), *FAST]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and "pass --model 'Models'" in err[0]


# ---------------------------------------------------------------------------- a DataFrame read like the file
@needs_shared
def test_audit_of_a_read_dataframe_matches_the_file():
    path = SHARED / "helm_lite" / "leaderboard.tsv"
    by_file = audit(path, n_boot=40, progress=False)
    df = pd.read_csv(path, sep="\t")
    for kw in ({"model": "Model"}, {}):
        got = audit(df, n_boot=40, progress=False, **kw)
        pd.testing.assert_frame_equal(got.scores, by_file.scores)
        assert got.settings["aggregate"] == by_file.settings["aggregate"] == "mwr"
        assert got.settings["ties"] == by_file.settings["ties"]


def test_audit_of_a_dataframe_with_a_model_column_names_a_missing_published_column():
    t = _table().reset_index()
    got = audit(t, model="model", n_boot=40, progress=False)
    pd.testing.assert_frame_equal(got.scores, audit(_table(), n_boot=40, progress=False).scores)
    with pytest.raises(ValueError, match="^published: column 'nope' not in the table"):
        audit(t, published="nope", n_boot=40, progress=False)


# ---------------------------------------------------------------------------- tables that cannot be audited
@pytest.mark.parametrize("scale", [1.5e308, 1e308, 7e307])
def test_scores_whose_sum_overflows_are_refused_naming_the_column(tmp_path, capsys, scale):
    t = _table(10, 3) * 0.5 + 0.5
    t["T1"] *= scale
    p = tmp_path / "huge.csv"
    t.to_csv(p)
    out = tmp_path / "report"
    assert main(["audit", str(p), "--out", str(out), *FAST]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and "column 'T1'" in err[0] and "too large" in err[0] and "inf" not in err[0]
    assert not out.exists()
    t["T1"] /= scale / 5e307  # a sum of three stays finite: audited, every aggregate finite
    res = audit(t, n_boot=20, progress=False)
    assert np.isfinite(res.scores[["mean", "mean_of_means"]].to_numpy()).all()


@pytest.mark.parametrize("text", ["model,a,b\n", "model,a,b\n\n"])
def test_a_table_without_rows_is_said_to_have_none(tmp_path, capsys, text):
    p = tmp_path / "empty.csv"
    p.write_text(text)
    assert main(["audit", str(p), "--out", str(tmp_path / "report"), *FAST]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and "no rows" in err[0] and "duplicate" not in err[0]
    assert not (tmp_path / "report").exists()


def test_a_column_without_values_is_said_to_have_none(tmp_path):
    t = _table(10, 4).reset_index()
    t["empty"] = np.nan
    t["kind"] = "chat"
    p = tmp_path / "board.csv"
    t.to_csv(p, index=False)
    note = " ".join(audit(p, n_boot=20, progress=False).notes)
    assert "columns with no values 'empty'" in note and "non-numeric columns 'kind'" in note
    assert "non-numeric columns 'empty'" not in note



def test_metadata_columns_are_named_in_the_notes_as_the_other_columns_are(tmp_path):
    """Columns left out as metadata are quoted one by one, as the non-numeric ones are, not as a Python list (whose
    brackets the Markdown report escapes): BBH's and MTEB's exports read "['Parameters']" there."""
    t = _table(10, 4).reset_index()
    t["Parameters"] = [7, 13, 70, 7, 13, 70, 7, 13, 70, 7]
    t["Max Tokens"] = 512
    t["kind"] = "chat"
    p = tmp_path / "board.csv"
    t.to_csv(p, index=False)
    note = " ".join(audit(p, n_boot=20, progress=False).notes)
    assert "metadata / rank columns 'Parameters', 'Max Tokens'" in note
    assert "[" not in note.split("metadata / rank columns", 1)[1].split(";", 1)[0]


@pytest.mark.parametrize("aggregate", ["mean", "mean-of-means", "mwr"])
def test_the_mean_win_rate_section_says_its_orders_are_not_the_ranking_above(aggregate):
    """The clone and removal checks rank by the Mean Win Rate whatever ranks the leaderboard: under the mean their
    top orders differ from the ranking table (BBH: GPT-4 > XuanYuan-70B > StableBeluga2 > DeepSeek-67B-Base there,
    GPT-4 > DeepSeek-67B-Base > XuanYuan-70B in the table), and the section must say whose orders they are."""
    t = _mean_leader_differs_from_mwr()
    md = audit(t, n_boot=20, progress=False, aggregate=aggregate).to_markdown()
    section = md.split("## Mean Win Rate sensitivity", 1)[1].split("\n## ", 1)[0]
    said = "the orders in this section are the Mean Win Rate's"
    assert (said in section) == (aggregate != "mwr")

@pytest.mark.parametrize("bad", [["--scenarios", "zz"], ["--model", "nosuch"], ["--exclude", "zz"]])
def test_a_refused_run_leaves_no_out_directory_behind(tmp_path, capsys, bad):
    p = tmp_path / "board.csv"
    _table(8, 3).to_csv(p)
    (tmp_path / "kept").mkdir()
    for out in (tmp_path / "new" / "deeper", tmp_path / "kept"):
        assert main(["audit", str(p), "--out", str(out), *bad, *FAST]) == 2
        assert len(_err_lines(capsys)) == 1
    assert not (tmp_path / "new").exists() and (tmp_path / "kept").is_dir()
    assert main(["audit", str(p), "--out", str(tmp_path / "new" / "deeper"), *FAST]) == 0
    assert (tmp_path / "new" / "deeper" / "report.md").exists()


def test_plot_labels_of_names_with_tabs_and_line_breaks_draw_without_missing_glyphs(tmp_path):
    t = _table(8, 3)
    t.index = ["tab\tname", "new\nline", "cr\rname", "esc\x1b[31m", *t.index[4:]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        audit(t, tmp_path / "report", n_boot=20, progress=False)
    assert not [w for w in caught if "Glyph" in str(w.message)]
    assert _labels(["tab\tname", "new\nline"]) == [r"tab\tname", r"new\nline"]


def test_a_ctrl_c_while_audit_force_puts_its_files_in_place_leaves_one_report(tmp_path, monkeypatch,
                                                                               ctrl_c_after_replacing):
    """A Ctrl-C (a real SIGINT) once the first file of a new audit is renamed into place over an earlier audit's:
    the other files follow before the command stops, so that the tables and the report are one audit's."""
    rng = np.random.default_rng(0)
    board = pd.DataFrame(rng.random((6, 4)).round(3), index=[f"m{i}" for i in range(6)],
                         columns=[f"s{j}" for j in range(4)]).rename_axis("model")
    board.to_csv(tmp_path / "a.csv")
    board.rename(index=lambda m: "X" + m).to_csv(tmp_path / "b.csv")
    argv = ["audit", "--out", str(tmp_path / "o"), "--n-boot", "20", "--no-progress"]
    assert main([*argv[:1], str(tmp_path / "a.csv"), *argv[1:]]) == 0
    ctrl_c_after_replacing("scores.csv")
    assert main([*argv[:1], str(tmp_path / "b.csv"), *argv[1:], "--force"]) == 130
    monkeypatch.undo()
    for name in ("scores.csv", "report.md", "report.html"):
        assert "Xm0" in (tmp_path / "o" / name).read_text(), name


def test_results_json_files_are_ranked_by_their_mean_as_the_open_llm_leaderboard_ranks_them(tmp_path):
    """Open LLM Leaderboard / lm-eval results files publish no aggregate column, but the leaderboard ranks by their
    Average: auto audits the mean's ranking (here its leader is not the Mean Win Rate's), and the report says why."""
    scores = {"org/A": (0.90, 0.20, 0.90), "org/B": (0.91, 0.91, 0.10), "org/C": (0.5, 0.5, 0.5),
              "org/D": (0.4, 0.4, 0.4)}
    for name, (arc, gsm, hella) in scores.items():
        d = tmp_path / "results" / name
        d.mkdir(parents=True)
        (d / "results_2024-01-01.json").write_text(json.dumps(
            {"config_general": {"model_name": name},
             "results": {"harness|arc:challenge|25": {"acc_norm": arc}, "harness|gsm8k|5": {"acc": gsm},
                         "harness|hellaswag|10": {"acc_norm": hella}}}))
    for fmt in ("openllm-json", "auto"):
        res = audit(tmp_path / "results", format=fmt, n_boot=50, progress=False)
        assert res.settings["aggregate"] == "mean" and res.leader == "org/A"
        assert any(n.startswith("Ranked by the mean of the scores: the results files publish no aggregate")
                   for n in res.notes)
    res = audit(tmp_path / "results", format="openllm-json", aggregate="mwr", n_boot=50, progress=False)
    assert res.leader == "org/B" and not any(n.startswith("Ranked by the mean") for n in res.notes)


def test_lm_eval_filters_of_one_metric_are_named_and_the_first_logged_is_read(tmp_path):
    for i in range(4):
        d = tmp_path / "results" / f"org__m{i}"
        d.mkdir(parents=True)
        (d / "results_2024-01-01.json").write_text(json.dumps(
            {"model_name": f"org/m{i}",
             "results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.2 + 0.05 * i,
                                   "exact_match_stderr,strict-match": 0.01,
                                   "exact_match,flexible-extract": 0.7 - 0.05 * i},
                         "arc_easy": {"acc,none": 0.5 + 0.02 * i, "acc_norm,none": 0.45 + 0.02 * i}}}))
    with pytest.warns(UserWarning, match=r"^SCORES: 'GSM8K' logs its metric under the filters 'flexible-extract', "
                                         r"'strict-match', read: 'exact_match,strict-match' \(the first filter each "
                                         r"results file logs\)"):
        wide = read_openllm_json(tmp_path / "results")
    np.testing.assert_allclose(wide["GSM8K"], [0.2, 0.25, 0.3, 0.35])  # strict-match, in every file
    np.testing.assert_allclose(wide["arc_easy"], [0.45, 0.47, 0.49, 0.51])
    with pytest.warns(UserWarning, match="filters"):
        res = audit(tmp_path / "results", n_boot=50, progress=False)
    note = next(n for n in res.notes if n.startswith("Metric read: "))
    assert "exact_match,strict-match for GSM8K" in note and "acc_norm,none for arc_easy" in note, note


def test_files_read_with_other_metrics_for_one_column_are_warned_about(tmp_path, capsys):
    for i in range(6):
        gsm = {"exact_match,strict-match": 0.1 * i} if i % 2 else {"exact_match,flexible-extract": 0.9 - 0.1 * i}
        arc = {"acc_norm": 0.5 + 0.05 * i, "acc": 0.4} if i % 2 else {"acc": 0.3 + 0.05 * i}
        (tmp_path / f"m{i}.json").write_text(json.dumps(
            {"config_general": {"model_name": f"m{i}"},
             "results": {"harness|gsm8k|5": gsm, "harness|arc:challenge|25": arc,
                         "harness|hellaswag|10": {"acc_norm": 0.5 + 0.01 * i}}}))
    with pytest.warns(UserWarning, match=r"^SCORES: the files log other metrics for one column, ranked as one: "
                                         r"'GSM8K' read as 'exact_match,flexible-extract' for 'm0', 'm2', 'm4', "
                                         r"'exact_match,strict-match' for 'm1', 'm3', 'm5'; 'ARC' read as 'acc' for "
                                         r"'m0', 'm2', 'm4', 'acc_norm' for 'm1', 'm3', 'm5'; to audit one") as rec:
        read_openllm_json(tmp_path)
    assert not any("HellaSwag" in str(w.message) for w in rec)
    assert main(["audit", str(tmp_path), "--out", str(tmp_path / "out"), "--n-boot", "50", "--no-progress"]) == 0
    assert "effstats audit: warning: SCORES: the files log other metrics for one column" in capsys.readouterr().err


def test_a_task_without_a_listed_metric_is_named_as_left_out(tmp_path):
    """lm-eval's wikitext logs perplexities only: it is left out in a warning naming it and what it logs (it
    vanished without a word)."""
    for i in range(3):
        (tmp_path / f"m{i}.json").write_text(json.dumps({"model_name": f"org/m{i}", "results": {
            "arc_easy": {"alias": "arc_easy", "acc,none": 0.5 + i / 10}, "boolq": {"acc,none": 0.6 - i / 20},
            "wikitext": {"alias": "wikitext", "word_perplexity,none": 20.0 + i, "bits_per_byte,none": 0.6}}}))
    with pytest.warns(UserWarning, match=r"^SCORES: 1 task\(s\) log none of the metrics acc_norm, acc, .* and are "
                                         r"left out: 'wikitext' \(it logs 'bits_per_byte', 'word_perplexity'\); "
                                         "name one with --metric where higher is better"):
        got = read_openllm_json(tmp_path)
    assert list(got.columns) == ["arc_easy", "boolq"]


def test_a_models_results_files_are_merged_task_by_task(tmp_path):
    """A later results file holding one task (a task run later, as the Open LLM details repos hold them) replaces
    that task's score only; the model's other tasks keep the earlier file's. A task in two files is resolved by
    ``duplicates`` and said; files of other tasks are merged without a word."""
    tasks = {"ARC": ("harness|arc:challenge|25", "acc_norm"), "GSM8K": ("harness|gsm8k|5", "acc"),
             "Winogrande": ("harness|winogrande|5", "acc")}
    for i in range(3):
        d = tmp_path / f"org/m{i}"
        d.mkdir(parents=True)
        res = {k: {m: 0.5 + i / 10} for k, m in tasks.values()}
        (d / "results_2024-01-10T10-00-00.json").write_text(json.dumps({"config_general": {"model_name": f"org/m{i}"},
                                                                      "results": res}))
    later = {"config_general": {"model_name": "org/m0"}, "results": {"harness|gsm8k|5": {"acc": 0.01}}}
    (tmp_path / "org/m0/results_2024-02-10T10-00-00.json").write_text(json.dumps(later))
    with pytest.warns(UserWarning, match=r"1 model\(s\) have a task in more than one results file \(1 \(model, "
                                         r"task\) pair\(s\): 'org/m0' 'GSM8K'\); kept the last file's score"):
        got = read_openllm_json(tmp_path)
    assert got.loc["org/m0"].to_dict() == {"ARC": 0.5, "GSM8K": 0.01, "Winogrande": 0.5}
    assert read_openllm_json(tmp_path, duplicates="first").loc["org/m0", "GSM8K"] == 0.5
    assert read_openllm_json(tmp_path, duplicates="mean").loc["org/m0"].to_dict() == pytest.approx(
        {"ARC": 0.5, "GSM8K": 0.255, "Winogrande": 0.5})
    with pytest.raises(ValueError, match=r"^SCORES: 1 model\(s\) have a task in more than one results file"):
        read_openllm_json(tmp_path, duplicates="error")
    # a later file of a task the model had not run: merged, no warning
    later["results"] = {"harness|hellaswag|10": {"acc_norm": 0.7}}
    (tmp_path / "org/m0/results_2024-02-10T10-00-00.json").write_text(json.dumps(later))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = read_openllm_json(tmp_path, duplicates="error")
    assert got.loc["org/m0"].to_dict() == {"ARC": 0.5, "GSM8K": 0.5, "Winogrande": 0.5, "HellaSwag": 0.7}
    assert got.loc["org/m1"].isna().sum() == 1


def test_a_results_file_naming_a_task_twice_is_refused(tmp_path, capsys):
    for i in range(5):
        (tmp_path / f"m{i}.json").write_text(
            f'{{"config_general": {{"model_name": "m{i}"}}, "results": {{"harness|arc:challenge|25": '
            f'{{"acc_norm": 0.{i}5}}, "harness|gsm8k|5": {{"acc": 0.{i}1}}, "harness|gsm8k|5": {{"acc": 0.9{i}}}, '
            f'"harness|hellaswag|10": {{"acc_norm": 0.5{i}}}}}}}')
    with pytest.raises(ValueError, match=r"^SCORES: '.*m0.json' line 1 names the key 'harness\|gsm8k\|5' twice in one "
                                         r"object"):
        read_openllm_json(tmp_path)
    assert main(["audit", str(tmp_path), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert "names the key 'harness|gsm8k|5' twice" in capsys.readouterr().err


def test_a_results_file_naming_a_task_twice_is_refused_at_its_line(tmp_path, capsys):
    """The file written one pair a line, as exports are: the refusal names the file, the line of the second
    occurrence and the key, as the other JSON readers' do (gzip'd the same)."""
    import gzip

    doc = {"config_general": {"model_name": "m0"}, "results": {
        "harness|arc:challenge|25": {"acc_norm": 0.5}, "harness|gsm8k|5": {"acc": 0.1},
        "harness|hellaswag|10": {"acc_norm": 0.5}}}
    lines = json.dumps(doc, indent=2).splitlines()
    at = next(k for k, ln in enumerate(lines) if '"harness|hellaswag|10"' in ln)
    lines[at:at] = ['    "harness|gsm8k|5": {"acc": 0.9},']  # the second occurrence, on line at + 1
    text = "\n".join(lines)
    assert json.loads(text)["results"]["harness|gsm8k|5"] == {"acc": 0.9}  # json reads it last-wins
    said = (f"line {at + 1} names the key 'harness|gsm8k|5' twice in one object (a hand edit?); keep one of them")
    (tmp_path / "m0.json").write_text(text)
    with pytest.raises(ValueError) as e:
        read_openllm_json(tmp_path / "m0.json")
    assert str(e.value) == f"SCORES: {str(tmp_path / 'm0.json')!r} {said}"
    (tmp_path / "m0.json").write_bytes(gzip.compress(text.encode()))  # compressed: told by its first bytes
    assert main(["audit", str(tmp_path / "m0.json"), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith(f"m0.json' {said}"), err


def test_audit_of_helm_run_folders_says_what_they_are(tmp_path, capsys):
    run = tmp_path / "runs" / "boolq:model=a_m"
    run.mkdir(parents=True)
    (run / "run_spec.json").write_text('{"name": "boolq:model=a/m"}')
    (run / "per_instance_stats.json").write_text("[]")
    assert main(["audit", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("effstats audit: error: SCORES: ") and "is a HELM run folder" in err, err
    assert "read_helm_runs" in err and len(err.strip().splitlines()) == 1


def test_metric_and_filter_choose_what_lm_eval_results_files_are_read_with(tmp_path, capsys):
    """``--metric`` reads that metric for every task (acc, not ARC's acc_norm), tasks without it left out with a
    warning; ``--filter`` reads lm-eval 0.4's filter asked for (no warning about several filters then); a metric or
    filter no file logs, a bad value, or either option for another layout is refused in one line naming it."""
    for i in range(4):
        d = tmp_path / "results" / f"org__m{i}"
        d.mkdir(parents=True)
        (d / "results_2024-01-01.json").write_text(json.dumps(
            {"model_name": f"org/m{i}",
             "results": {"gsm8k": {"exact_match,strict-match": 0.2 + 0.05 * i, "exact_match,flexible-extract":
                                   0.7 - 0.05 * i},
                         "arc_easy": {"acc,none": 0.5 + 0.02 * i, "acc_norm,none": 0.45 + 0.02 * i},
                         "truthfulqa_mc2": {"mc2,none": 0.3 + 0.01 * i}}}))
    with pytest.warns(UserWarning, match=r"^SCORES: 2 task\(s\) do not log the metric 'acc' \(--metric\) and are "
                                         r"left out: 'gsm8k', 'truthfulqa_mc2'"):
        wide = read_openllm_json(tmp_path / "results", metric="acc")
    assert list(wide.columns) == ["arc_easy"]
    np.testing.assert_allclose(wide["arc_easy"], [0.5, 0.52, 0.54, 0.56])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wide = read_openllm_json(tmp_path / "results", filter="flexible-extract")
    np.testing.assert_allclose(wide["GSM8K"], [0.7, 0.65, 0.6, 0.55])
    np.testing.assert_allclose(wide["arc_easy"], [0.45, 0.47, 0.49, 0.51])  # one filter logged: read as it is
    out = tmp_path / "o"
    assert main(["audit", str(tmp_path / "results"), "--out", str(out), *FAST, "--filter", "flexible-extract"]) == 0
    scores = pd.read_csv(out / "scores.csv").set_index("model")
    assert scores.loc["org/m0", "mean"] > scores.loc["org/m3", "mean"]  # GSM8K's flexible-extract ranks m0 first
    note = (out / "report.md").read_text()
    assert "exact_match,flexible-extract for GSM8K" in note and "--filter flexible-extract" in note
    capsys.readouterr()
    board = tmp_path / "board.csv"
    _table().to_csv(board, index_label="model")
    bad = {("--metric", "nope"): "--metric: no results entry logs 'nope'; they log 'acc', 'acc_norm', "
                                 "'exact_match', 'mc2'",
           ("--filter", "nope"): "--filter: no metric is logged under the filter 'nope'; the files log "
                                 "'flexible-extract', 'none', 'strict-match'",
           ("--metric", "acc,none"): "--metric: expected a metric name as the results files log it (e.g. acc), got "
                                     "'acc,none'",
           ("--filter", " "): "--filter: expected a filter name as the results files log it (e.g. strict-match), "
                              "got ' '"}
    for (flag, value), said in bad.items():
        assert main(["audit", str(tmp_path / "results"), "--out", str(tmp_path / "bad"), *FAST, flag, value]) == 2
        assert _err_lines(capsys) == [f"effstats audit: error: {said}"]
    for flag in ("--metric", "--filter"):
        assert main(["audit", str(board), "--out", str(tmp_path / "bad"), *FAST, flag, "acc"]) == 2
        assert _err_lines(capsys) == [
            f"effstats audit: error: {flag}: applies to lm-evaluation-harness / Open LLM Leaderboard results JSON "
            "files (--format openllm-json), not to table input; leave it out"]
    with pytest.raises(ValueError, match=r"^--metric: applies to .* not to a DataFrame; leave it out"):
        audit(_table(), metric="acc", n_boot=20, progress=False)
    assert not (tmp_path / "bad").exists()


def test_the_write_probe_a_kill_left_in_out_is_removed_by_the_next_audit(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = out / f".effstats_write_test.{int(dead.stdout)}.k3x9.tmp"  # killed between the probe's creation and removal
    left.write_text("")
    (out / "notes.txt").write_text("mine")
    audit(pd.DataFrame({"A": [0.9, 0.5, 0.2], "B": [0.8, 0.4, 0.3]}, index=["x", "y", "z"]), out, n_boot=20,
          progress=False)
    assert not left.exists() and (out / "notes.txt").read_text() == "mine"
    assert not [f for f in out.iterdir() if f.name.startswith(".effstats_write_test")]


@pytest.mark.parametrize("name, compress", [("scores.csv.gz", "gzip"), ("scores.tsv.bz2", "bz2"),
                                            ("scores.csv", "lzma")])
def test_a_compressed_table_is_read_as_the_plain_one(tmp_path, capsys, name, compress):
    """A table compressed with gzip, bzip2 or xz (told by its first bytes, whatever its name) reads as the same
    table uncompressed, for the audit as for the loop's reader; a compressed results JSON named ``.json.gz`` is read
    as JSON."""
    import importlib

    sep = "\t" if ".tsv" in name else ","
    text = sep.join(["model", "mmlu", "arc", "gsm8k"]) + "\n" + "".join(
        sep.join([f"org/m{i}", f"{0.3 + 0.05 * i:.2f}", f"{0.6 - 0.04 * i:.2f}", f"{0.2 + 0.03 * i:.2f}"]) + "\n"
        for i in range(6))
    (tmp_path / f"plain{'.tsv' if sep == chr(9) else '.csv'}").write_text(text)
    (tmp_path / name).write_bytes(importlib.import_module(compress).compress(text.encode()))
    plain, _ = read_scores(tmp_path / f"plain{'.tsv' if sep == chr(9) else '.csv'}")
    got, _ = read_scores(tmp_path / name)
    pd.testing.assert_frame_equal(got, plain)
    assert main(["audit", str(tmp_path / name), "--out", str(tmp_path / "out"), "--no-progress"]) == 0, \
        capsys.readouterr().err
    if compress == "gzip":
        import gzip

        doc = {"config_general": {"model_name": "m0"}, "results": {"harness|arc:challenge|25": {"acc_norm": 0.5},
                                                                    "harness|gsm8k|5": {"acc": 0.1}}}
        (tmp_path / "m0.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
        assert main(["audit", str(tmp_path / "m0.json.gz"), "--out", str(tmp_path / "j"), "--no-progress"]) == 2
        # read as the results of one model (a folder of them is the leaderboard), not as a table
        assert capsys.readouterr().err.strip() == "effstats audit: error: SCORES: expected at least 2 models, got 1"
