"""The evaluation-data model: construction, validation, conversions, selections, aggregates."""
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from effstats import ResponseMatrix


def small():
    vals = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]])
    return ResponseMatrix(
        vals,
        model_ids=["a", "b", "c"],
        item_ids=["x1", "x2", "y1", "y2"],
        items={"scenario": ["x", "x", "y", "y"]},
        models={"release_date": pd.to_datetime(["2020-01-01", "2021-01-01", "2022-01-01"])},
    )


def test_kind_inference_and_accuracy():
    rm = small()
    assert rm.kind == "binary" and rm.values.dtype == bool and rm.shape == (3, 4)
    np.testing.assert_allclose(rm.accuracy(), [0.75, 0.25, 1.0])
    s = ResponseMatrix([[0.5, 1.0], [0.25, 0.0]])
    assert s.kind == "score"
    np.testing.assert_allclose(s.accuracy(), [0.75, 0.125])



def test_tiny_graded_scores_are_kept_and_only_zero_one_data_is_snapped():
    """Graded scores of about 1e-10 and 1e-12 (sequence probabilities) beside graded scores in [0, 1] stay as they
    are: the two models' means differ 100-fold; 0/1 results off by 1e-12 (the whole matrix near 0 or 1) are 0/1."""
    from effstats._validation import check_binary, is_zero_one, snap_zero_one

    rng = np.random.default_rng(0)
    X = np.vstack([rng.uniform(0.5e-10, 1.5e-10, 200), rng.uniform(0.5e-12, 1.5e-12, 200), rng.uniform(0, 1, 200)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rm = ResponseMatrix(X, model_ids=["good", "bad", "other"])
    assert rm.kind == "score"
    np.testing.assert_array_equal(rm.values, X)
    means = rm.accuracy()
    assert means[0] / means[1] == pytest.approx(X[0].mean() / X[1].mean()) and 50 < means[0] / means[1] < 200
    assert not is_zero_one(X) and not is_zero_one(X, axis=1).any()
    np.testing.assert_array_equal(snap_zero_one(X), X)
    with pytest.raises(ValueError, match="expected binary 0/1 values"):
        check_binary(np.where(X > 0.5, 1.0, X), "responses")
    noisy = np.where(X > 0.5, 1 - 1e-12, 1e-12)
    noisy[0, 0] = np.nan  # a missing cell does not make 0/1 data graded
    assert ResponseMatrix(noisy, nan_as_missing=True).kind == "binary"
    np.testing.assert_array_equal(snap_zero_one(noisy), np.where(np.isnan(noisy), np.nan, X > 0.5))

def _snapped_by_the_rule(a: np.ndarray) -> np.ndarray:
    """The 0/1 rule written out on its own: round each value; when every value (NaN aside) lies within 1e-9 of a
    0 or 1 it rounds to, those values become exactly that 0 or 1."""
    r = np.rint(a)
    with np.errstate(invalid="ignore"):
        near = ((r == 0) | (r == 1)) & (np.abs(a - r) <= 1e-9)
    if not (near | np.isnan(a)).all() or not (near & (a != r)).any():
        return a
    return np.where(near, r + 0.0, a)


_NEAR = [0.0, -0.0, 1.0, 1e-9, -1e-9, 1 + 1e-9, 1 - 1e-9, np.nextafter(1e-9, 1), np.nextafter(-1e-9, -1),
         np.nextafter(1 - 1e-9, 0), np.nextafter(1 + 1e-9, 2), 1e-12, -1e-13, 1 - 1e-12, 1 + 1e-12, np.nan]
_CELLS = st.one_of(st.sampled_from(_NEAR), st.floats(-1e-8, 1e-8), st.floats(1 - 1e-8, 1 + 1e-8),
                   st.sampled_from([0.5, 1e-6, 2.0, -np.inf, np.inf]))


@settings(max_examples=300, deadline=None)
@given(a=arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=_CELLS),
       single=st.booleans())
def test_one_scan_snaps_and_judges_0_1_as_the_rule_says(a, single):
    from effstats._validation import check_binary, is_zero_one, snap_zero_one, snap_zero_one_scan

    if single:
        a = a.astype(np.float32)
    want = _snapped_by_the_rule(a)
    for allow_nan in (False, True):
        got, binary = snap_zero_one_scan(a, allow_nan=allow_nan)
        assert got.dtype == a.dtype and np.array_equal(got, want, equal_nan=True)
        assert (np.signbit(got) == np.signbit(want)).all()  # -0.0 snapped is 0.0, as the rule's r + 0.0
        ok = (want == 0) | (want == 1) | (allow_nan & np.isnan(want))
        assert binary == bool(ok.all())
    assert np.array_equal(snap_zero_one(a), want, equal_nan=True)
    assert is_zero_one(a) == bool(np.isin(want, (0, 1)).all())
    np.testing.assert_array_equal(is_zero_one(a, axis=1), np.isin(want, (0, 1)).all(axis=1))
    np.testing.assert_array_equal(is_zero_one(a, axis=0), np.isin(want, (0, 1)).all(axis=0))
    if np.isfinite(a[~np.isnan(a)]).all():
        if ((want == 0) | (want == 1) | np.isnan(want)).all():
            np.testing.assert_array_equal(check_binary(a, "y", allow_nan=True), want == 1)
        else:
            with pytest.raises(ValueError, match="^y: expected binary 0/1 values, found"):
                check_binary(a, "y", allow_nan=True)
    if np.isfinite(a).all():
        # a ResponseMatrix reads the cells it is given as the rule says, in one scan
        _reads_as_the_rule_says(a, None)
        miss = np.zeros(a.shape, bool)
        miss[:, 0] = True
        if a.shape[1] > 1:  # a missing cell's value is not read: the rest decide
            _reads_as_the_rule_says(a, miss)


def _reads_as_the_rule_says(a: np.ndarray, miss: np.ndarray | None) -> None:
    """A ResponseMatrix of ``a``: binary when the observed cells are 0/1 by the rule, else graded scores as they are
    (refused outside [0, 1]: values of -1e-13 beside graded scores are not moved)."""
    want = _snapped_by_the_rule(a if miss is None else np.where(miss, 0.0, a).astype(a.dtype))
    if np.isin(want, (0, 1)).all():
        rm = ResponseMatrix(a, missing=miss)
        assert rm.kind == "binary"
        np.testing.assert_array_equal(rm.values, want == 1)
    elif want.min() < 0 or want.max() > 1:
        with pytest.raises(ValueError, match=r"^values: expected values in \[0, 1\]"):
            ResponseMatrix(a, missing=miss)
    else:
        rm = ResponseMatrix(a, missing=miss)
        assert rm.kind == "score"
        np.testing.assert_array_equal(rm.values, want)


def test_one_scan_reads_a_90_by_80000_matrix_as_the_rule_says():
    from effstats._validation import check_binary

    rng = np.random.default_rng(0)
    exact = (rng.random((90, 80_000)) < 0.6).astype(float)
    noisy = exact + rng.normal(0, 1e-13, exact.shape)
    graded, noisy_graded = exact.copy(), noisy.copy()
    graded[45, 40_000] = noisy_graded[45, 40_000] = 0.5  # one graded score: nothing moves
    for a in (exact, noisy, graded, noisy_graded):
        _reads_as_the_rule_says(a, None)
        _reads_as_the_rule_says(a, np.broadcast_to(np.arange(a.shape[1]) % 7 == 0, a.shape))
        want = _snapped_by_the_rule(a)
        if np.isin(want, (0, 1)).all():
            np.testing.assert_array_equal(check_binary(a, "y"), want == 1)
        else:
            with pytest.raises(ValueError, match=r"^y: expected binary 0/1 values, found \["):
                check_binary(a, "y")


def test_group_scores_and_mean_of_means():
    rm = small()
    gs = rm.group_scores("scenario")
    np.testing.assert_allclose(gs.to_numpy(), [[0.5, 1.0], [0.0, 0.5], [1.0, 1.0]])
    np.testing.assert_allclose(rm.mean_of_means("scenario"), [0.75, 0.25, 1.0])
    # unequal group sizes: mean of means differs from the pooled mean
    rm2 = ResponseMatrix([[1, 1, 1, 0]], items={"g": ["a", "b", "b", "b"]})
    assert rm2.mean_of_means("g").iloc[0] == pytest.approx((1 + 2 / 3) / 2)
    assert rm2.accuracy().iloc[0] == pytest.approx(0.75)


def test_missing_mask_is_respected_never_zero():
    vals = np.array([[1.0, np.nan, 0.0], [0.5, 1.0, np.nan]])
    with pytest.raises(ValueError, match="^values: contains NaN; expected finite numbers; pass nan_as_missing=True "
                                         "to read NaN as a missing cell$"):
        ResponseMatrix(vals)
    rm = ResponseMatrix(vals, nan_as_missing=True)
    assert rm.kind == "score" and rm.missing.sum() == 2
    np.testing.assert_allclose(rm.accuracy(), [0.5, 0.75])
    assert np.isnan(rm.to_frame().iloc[0, 1])
    long = rm.to_long()
    assert len(long) == 4 and long["score"].notna().all()


def test_long_and_wide_round_trip():
    rm = small()
    long = rm.to_long()
    assert list(long.columns[:3]) == ["model", "item", "score"] and "scenario" in long
    back = ResponseMatrix.from_long(long, groups="scenario")
    pd.testing.assert_frame_equal(back.to_frame().astype(float), rm.to_frame().astype(float), check_names=False)
    assert back.items["scenario"].tolist() == ["x", "x", "y", "y"]
    wide = rm.to_frame().astype(object)
    wide.iloc[1, 2] = "-"
    w = ResponseMatrix.from_wide(wide)
    assert w.missing[1, 2] and w.missing.sum() == 1


def test_from_long_pairs_absent_become_missing():
    df = pd.DataFrame({"model": ["a", "a", "b"], "item": ["i", "j", "i"], "score": [1, 0, 1]})
    rm = ResponseMatrix.from_long(df)
    assert rm.kind == "binary" and rm.missing.tolist() == [[False, False], [False, True]]


def test_from_long_a_nan_score_is_a_row_not_evaluated():
    df = pd.DataFrame({"model": ["a", "a", "b", "b", "c"], "item": ["i", "j", "i", "j", "i"],
                       "score": [1.0, np.nan, 0.5, 1.0, np.nan]})
    df.loc[5] = ["c", "j", 0.0]
    with pytest.warns(UserWarning, match=r"^score: NaN in 2 of 6 rows of column 'score': read as cells not "
                                         r"evaluated") as rec:
        rm = ResponseMatrix.from_long(df)
    assert len(rec) == 1
    absent = ResponseMatrix.from_long(df.dropna())  # the same matrix as without those rows
    assert rm.to_frame().equals(absent.to_frame()) and rm.missing.sum() == 2 and rm.kind == "score"


@pytest.mark.parametrize("nan_rows, message", [([0, 1], "model(s) 'a' have NaN"), ([1, 3], "item(s) 'j' have NaN")])
def test_from_long_refuses_a_model_or_item_with_no_score_left(nan_rows, message):
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["i", "j", "i", "j"], "score": [1.0, 0.0, 0.0, 1.0]})
    df.loc[nan_rows, "score"] = np.nan
    with pytest.raises(ValueError, match=rf"^score: {re.escape(message)} in column 'score' on every row"):
        ResponseMatrix.from_long(df)


def test_from_probabilities():
    p = np.array([[[0.7, 0.3], [0.2, 0.8]], [[0.4, 0.6], [0.9, 0.1]]])
    rm = ResponseMatrix.from_probabilities(p, labels=np.array([0, 1]))
    assert rm.values.tolist() == [[True, True], [False, False]]
    np.testing.assert_allclose(rm.true_class_probability(), [[0.7, 0.8], [0.4, 0.1]])
    assert rm.subset(items=[1]).probabilities.shape == (2, 1, 2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(values=[[1, 0], [1]]), "values"),
        (dict(values=[1, 0, 1]), "values: expected a 2-D"),
        (dict(values=np.zeros((0, 3))), "values: expected a non-empty"),
        (dict(values=[[0.5, 2.0]]), r"values: expected values in \[0, 1\]"),
        (dict(values=[[0.5, 1.0]], kind="binary"), "values: kind='binary' requires 0/1"),
        (dict(values=[[1, 0]], model_ids=["a", "b"]), "model_ids: expected 1 ids"),
        (dict(values=[[1, 0]], item_ids=["a", "a"]), "item_ids: ids must be unique"),
        (dict(values=[[1, 0]], missing=[[1, 1]]), "missing: a model has no evaluated item"),
        (dict(values=[[1, 0]], missing=[[2, 0]]), "missing: expected binary"),
        (dict(values=[[1, 0]], kind="bad"), "kind"),
        (dict(values=[[1, 0]], probabilities=np.full((1, 2, 2), 0.5)), "labels: required"),
        (dict(values=[[1, 0]], probabilities=np.full((1, 2, 2), 0.7), labels=[0, 1]), "probabilities: .*sum to 1"),
        (dict(values=[[1, 0]], items={"g": ["a"]}), "items: expected 2 rows"),
        (dict(values=[["a", "b"]]), "values"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ResponseMatrix(**kwargs)


def test_require_binary_and_duplicates_in_long():
    with pytest.raises(ValueError, match="responses: binary correctness is required"):
        ResponseMatrix([[0.5, 1.0]]).require_binary()
    with pytest.raises(ValueError, match="responses: a complete matrix"):
        ResponseMatrix([[1.0, np.nan]], nan_as_missing=True).require_binary()
    df = pd.DataFrame({"model": ["a", "a"], "item": ["i", "i"], "score": [1, 0]})
    with pytest.raises(ValueError, match="df: duplicate"):
        ResponseMatrix.from_long(df)
    with pytest.raises(ValueError, match="score: column 'score' has non-numeric"):
        ResponseMatrix.from_long(pd.DataFrame({"model": ["a"], "item": ["i"], "score": ["x"]}))
    with pytest.raises(ValueError, match="by: item metadata has no column"):
        small().group_scores("nope")


def test_subset_and_transpose():
    rm = small()
    sub = rm.subset(models=["c", "a"], items=np.array([True, False, True, False]))
    assert sub.model_ids.tolist() == ["c", "a"] and sub.item_ids.tolist() == ["x1", "y1"]
    assert sub.values.tolist() == [[True, True], [True, True]]
    assert sub.items["scenario"].tolist() == ["x", "y"]
    t = rm.T
    assert t.shape == (4, 3) and (t.values == rm.values.T).all()
    assert t.model_ids.tolist() == rm.item_ids.tolist() and "scenario" in t.models
    assert (t.T.values == rm.values).all()
    with pytest.raises(ValueError, match="models: unknown ids"):
        rm.subset(models=["zz"])
    with pytest.raises(ValueError, match="items: the selection is empty"):
        rm.subset(items=[])


@settings(max_examples=50, deadline=None)
@given(arrays(np.int8, st.tuples(st.integers(1, 6), st.integers(1, 9)), elements=st.integers(0, 1)))
def test_pack_round_trip_and_sums(a):
    rm = ResponseMatrix(a, kind="binary")
    p = rm.pack()
    assert (p.to_dense() == rm.values).all()
    np.testing.assert_array_equal(p.row_sums(), a.sum(1))
    np.testing.assert_array_equal(p.col_sums(block_bytes=1), a.sum(0))


def test_masked_array_cells_are_missing():
    values = np.ma.masked_array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]], mask=[[0, 1, 0], [0, 0, 1]])
    rm = ResponseMatrix(values)
    np.testing.assert_array_equal(rm.missing, values.mask)
    assert rm.accuracy().tolist() == [1.0, 1.0]
    both = ResponseMatrix(values, missing=[[0, 0, 0], [1, 0, 0]])  # the mask and ``missing`` add up
    assert both.missing.sum() == 3 and both.accuracy().tolist() == [1.0, 1.0]
    assert ResponseMatrix(np.ma.masked_array([[1, 0]])).missing is None  # nothing masked


@pytest.mark.parametrize("col", ["model", "item"])
@pytest.mark.parametrize("absent", [None, np.nan])
def test_from_long_refuses_rows_without_an_id(col, absent):
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": [1.0, 2.0, 1.0, 2.0], "score": [1, 0, 0, 1]})
    df.loc[[1, 3], col] = absent
    with pytest.raises(ValueError, match=rf"^{col}: column '{col}' has 2 row\(s\) with no id .* row 1;"):
        ResponseMatrix.from_long(df)


@pytest.mark.parametrize("dtype", ["timedelta64[s]", "datetime64[s]"])
def test_durations_and_dates_are_not_correctness(dtype):
    with pytest.raises(ValueError, match=f"^values: expected numbers, got {dtype.replace('[', '.').replace(']', '.')}"):
        ResponseMatrix(np.array([[1, 0]], dtype=dtype))
    frame = pd.DataFrame({"q1": [1, 0], "q2": np.array([1, 0], dtype=dtype)}, index=["a", "b"])
    with pytest.raises(ValueError, match="^values: column 'q2' holds"):
        ResponseMatrix(frame)
    with pytest.raises(ValueError, match="^df: column 'q2' holds"):
        ResponseMatrix.from_wide(frame)
    long = pd.DataFrame({"model": ["a"], "item": ["q"], "score": np.array([1], dtype=dtype)})
    with pytest.raises(ValueError, match="^score: column 'score' holds"):
        ResponseMatrix.from_long(long)


@pytest.mark.parametrize("dtype, cells", [("Int64", [1, pd.NA, 1]), ("boolean", [True, pd.NA, True]),
                                          ("Float64", [1.0, pd.NA, 1.0])])
def test_nullable_columns_hold_missing_cells(dtype, cells):
    df = pd.DataFrame({"a": pd.array(cells, dtype=dtype), "b": [0, 1, 1]})
    rm = ResponseMatrix(df, nan_as_missing=True)
    np.testing.assert_array_equal(rm.missing, [[False, False], [True, False], [False, False]])
    assert rm.accuracy().tolist() == [0.5, 1.0, 1.0]
    with pytest.raises(ValueError, match="^values: contains NaN.*pass nan_as_missing=True"):
        ResponseMatrix(df)
    wide = ResponseMatrix.from_wide(df)
    np.testing.assert_array_equal(wide.missing, rm.missing)


def test_from_wide_nan_as_missing_keyword():
    df = pd.DataFrame({"a": [1, np.nan], "b": [0, 1]})
    assert ResponseMatrix.from_wide(df, nan_as_missing=True).missing.sum() == 1
    with pytest.raises(ValueError, match="^df: contains NaN"):
        ResponseMatrix.from_wide(df, nan_as_missing=False)
    with pytest.raises(ValueError, match="^nan_as_missing: expected True or False"):
        ResponseMatrix.from_wide(df, nan_as_missing="yes")


def test_ids_equal_after_unicode_normalisation_warn():
    long = pd.DataFrame({"model": ["a", "a", "a"], "item": ["caf\u00e9", "cafe\u0301", "CAF\u00c9"],
                         "score": [1, 0, 1]})
    with pytest.warns(UserWarning, match=r"^item_ids: ids that differ only by Unicode normalisation "
                      r"\(NFC/NFD\) are kept apart.*'cafe\\u0301' and 'caf\\xe9'"):
        rm = ResponseMatrix.from_long(long)
    assert rm.n_items == 3  # kept apart: the warning does not merge them
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ResponseMatrix([[1, 0]], model_ids=["GPT"], item_ids=["caf\u00e9", "CAF\u00c9"])  # case: other ids
        ResponseMatrix([[1, 0]], item_ids=["cafe\u0301", "x"])  # NFD alone has no twin


def test_long_ids_are_cut_in_messages():
    long = "x" * 5000
    with pytest.raises(ValueError,
                       match=r"^item_ids: ids must be unique, duplicated: \['x{60}…\(5000 characters\)'\]$"):
        ResponseMatrix([[1, 0]], item_ids=[long, long])
    with pytest.raises(ValueError, match=r"^items: unknown ids \['x{60}…\(5001 characters\)'\]$"):
        ResponseMatrix([[1, 0]], item_ids=["a", "b"]).subset(items=[long + "y"])
    ok = "y" * 80  # up to 80 characters, an id is shown whole
    with pytest.raises(ValueError, match=rf"^items: unknown ids \['{ok}'\]$"):
        ResponseMatrix([[1, 0]], item_ids=["a", "b"]).subset(items=[ok])


@pytest.mark.parametrize("ids, message", [
    ([None, "b", "c"], "model_ids: 1 id(s) missing (None or NaN), the first at position 0; give each an id"),
    (["a", float("nan"), None], "model_ids: 2 id(s) missing (None or NaN), the first at position 1; give each an id"),
    ([1, "1", "b"], "model_ids: ids 1 and '1' are two ids written alike ('1' in a file or a report); make them one "
                    "type (all text, say)")])
def test_ids_missing_or_written_alike_are_refused_as_from_long_refuses_them(ids, message):
    with pytest.raises(ValueError) as err:
        ResponseMatrix(np.ones((3, 2)), model_ids=ids)
    assert str(err.value) == message


def test_subset_aligns_a_boolean_series_by_its_index():
    """A boolean Series is aligned by its labels (item ids); the default index is row order; nullable integers are
    positions; NA, other labels and an ambiguous default index are refused naming the argument."""
    rm = ResponseMatrix(np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 0]], bool), item_ids=list("abcd"))
    assert rm.subset(items=pd.Series([True, True, False, False], index=list("dcba"))).item_ids.tolist() == ["c", "d"]
    assert rm.subset(items=pd.Series([True, False, True, False])).item_ids.tolist() == ["a", "c"]
    assert rm.subset(items=pd.Series([False, True, True, False], dtype="boolean")).item_ids.tolist() == ["b", "c"]
    assert rm.subset(items=pd.array([3, 0], dtype="Int64")).item_ids.tolist() == ["d", "a"]
    with pytest.raises(ValueError, match=r"items: the selection holds missing values \(NA\)"):
        rm.subset(items=pd.array([0, None], dtype="Int64"))
    with pytest.raises(ValueError, match="items: index does not match the ids; unknown"):
        rm.subset(items=pd.Series([True] * 4, index=list("wxyz")))
    perm = ResponseMatrix(np.ones((2, 3)), item_ids=[2, 0, 1])
    assert perm.subset(items=pd.Series([True, False, True], index=[2, 0, 1])).item_ids.tolist() == [2, 1]
    with pytest.raises(ValueError, match="items: its index is 0..2 and the ids are the integers 0..2 in another order"):
        perm.subset(items=pd.Series([True, False, True]))


def test_metadata_with_a_default_index_and_integer_ids_in_another_order_is_refused():
    """Row order and id order differ: the default index is refused rather than read either way."""
    tasks = pd.DataFrame({"task": ["a", "b", "c"]})
    with pytest.raises(ValueError, match="items: its index is 0..2 and the ids are the integers 0..2 in another"):
        ResponseMatrix([[1, 0, 1], [0, 1, 1]], item_ids=[2, 0, 1], items=tasks)
    with pytest.raises(ValueError, match="models: its index is 0..1 and the ids"):
        ResponseMatrix([[1, 0, 1], [0, 1, 1]], model_ids=[1, 0], models=pd.DataFrame({"size": [7, 70]}))
    rm = ResponseMatrix([[1, 0, 1], [0, 1, 1]], item_ids=[2, 0, 1], items=tasks.set_axis([2, 0, 1]))
    assert rm.items["task"].tolist() == ["a", "b", "c"]
    rm = ResponseMatrix([[1, 0, 1], [0, 1, 1]], item_ids=[0, 1, 2], items=tasks.set_axis([2, 1, 0]))
    assert rm.items["task"].tolist() == ["c", "b", "a"]
    assert ResponseMatrix([[1, 0, 1]], item_ids=list("xyz"), items=tasks).items["task"].tolist() == ["a", "b", "c"]


def test_ids_as_tuples_are_kept_whole_and_a_set_is_refused():
    rm = ResponseMatrix([[1, 0], [0, 1]], model_ids=[(1, 2), (3, 4)])
    assert rm.model_ids.tolist() == [(1, 2), (3, 4)]
    assert rm.accuracy()[(3, 4)] == 0.5
    with pytest.raises(TypeError, match="model_ids: expected an ordered sequence of 2 ids .* got a set"):
        ResponseMatrix([[1, 1], [0, 1]], model_ids={"gpt", "llama"})
    with pytest.raises(ValueError, match="item_ids: expected an ordered sequence of 2 ids .* got a frozenset"):
        ResponseMatrix([[1, 1], [0, 1]], item_ids=frozenset({"a", "b"}))
