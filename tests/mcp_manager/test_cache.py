"""BoundedCache: the least recently used entry goes first, and both bounds hold."""

from __future__ import annotations

import pytest

from mcp_manager.cache import BoundedCache


def test_the_count_bound_forgets_the_least_recently_used() -> None:
    cache: BoundedCache[str, int] = BoundedCache(max_entries=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now "b" is the least recently used
    cache.put("c", 3)
    assert len(cache) == 2
    assert "b" not in cache
    assert cache.get("a") == 1
    assert cache.get("c") == 3


def test_the_weight_bound_forgets_until_it_holds() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(max_weight=10, weigh=len)
    cache.put("a", b"x" * 4)
    cache.put("b", b"x" * 4)
    cache.put("c", b"x" * 4)
    assert "a" not in cache
    assert cache.weight == 8
    assert len(cache) == 2


def test_a_value_heavier_than_the_bound_is_kept_alone() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(max_weight=10, weigh=len)
    cache.put("small", b"x")
    cache.put("huge", b"x" * 50)  # the run about to start needs it
    assert cache.get("huge") == b"x" * 50
    assert "small" not in cache
    assert cache.weight == 50
    cache.put("next", b"y")
    assert "huge" not in cache
    assert cache.weight == 1


def test_replacing_a_value_counts_its_weight_once() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(max_weight=100, weigh=len)
    cache.put("a", b"x" * 30)
    cache.put("a", b"x" * 10)
    assert cache.weight == 10
    assert cache.pop("a") == b"x" * 10
    assert cache.weight == 0
    assert cache.pop("a") is None


def test_an_empty_count_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        BoundedCache[str, int](max_entries=0)


def test_clear_forgets_everything_and_its_weight() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(max_weight=10, weigh=len)
    cache.put("a", b"1234")
    cache.clear()
    assert (len(cache), cache.weight, cache.get("a")) == (0, 0, None)
    cache.put("b", b"1234567890")
    assert cache.weight == 10
