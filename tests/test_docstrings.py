"""The examples in the ttlstore package's docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["ttlstore._session", "ttlstore._ttl"])
def test_docstring_examples_hold(module: str):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
