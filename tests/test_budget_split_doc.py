"""The README and the guide say how ``select`` splits a budget over tasks as :func:`allocate_budget` does it: two
items a task first, the rest in proportion to the sizes, with a worked example whose numbers it reproduces."""
import re
from pathlib import Path

import pandas as pd
import pytest

from effstats.workflow import allocate_budget

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = re.compile(r"(\d+) items over tasks of (\d+), (\d+) and (\d+) items: (\d+), (\d+) and (\d+)")


@pytest.mark.parametrize("doc", ["README.md", "docs/guide/loop.rst"])
def test_the_docs_say_two_items_a_task_first_and_their_example_is_what_select_does(doc):
    text = " ".join((ROOT / doc).read_text().split())
    assert re.search(r"two items (a task )?first|gives each task two items", text), doc
    m = EXAMPLE.search(text)
    assert m, f"{doc}: no worked example of the budget split"
    budget, *sizes = map(int, m.groups()[:4])
    want = list(map(int, m.groups()[4:]))
    got = allocate_budget(pd.Series(dict(zip("abc", sizes))), budget).tolist()
    assert got == want
    # and it is not what proportion alone gives: the example shows the two items first
    assert got != [round(budget * s / sum(sizes)) for s in sizes]
