"""Rules for the whole test suite."""
import pytest


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(config, items):
    # executing a notebook takes long: every test marked `notebook` is also `slow` (make test-fast leaves it out)
    for item in items:
        if item.get_closest_marker("notebook") is not None:
            item.add_marker(pytest.mark.slow)
