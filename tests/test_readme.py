"""The README's API tour runs as written and prints sensible numbers."""
import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_starts_with_the_two_commands():
    text = README.read_text()
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    assert first_block.split("\n")[0].startswith("make demo") and "make test" in first_block


def test_readme_tour_executes():
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    lines = out.getvalue().strip().splitlines()
    # first printed line: Sort & Search accuracy error of new models from 200 items, in [0, 0.1]
    assert 0 <= float(lines[0]) < 0.1
