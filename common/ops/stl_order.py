"""Ops helper: the order in which the C++ standard library (libstdc++, which TensorFlow's
Linux builds use) leaves elements that compare equal, for kernels whose output depends
on it: std::priority_queue over a vector (push_heap/pop_heap) and std::sort (introsort,
not stable). Python's heapq and sorted break ties differently.

`less(a, b)` is the C++ comparator. Pure functions over lists; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Less = Callable[[Any, Any], bool]
_THRESHOLD = 16  # libstdc++'s _S_threshold


def _sift_up(h: list, hole: int, top: int, value: Any, less: Less) -> None:
    parent = (hole - 1) // 2
    while hole > top and less(h[parent], value):
        h[hole] = h[parent]
        hole = parent
        parent = (hole - 1) // 2
    h[hole] = value


def _adjust_heap(h: list, first: int, hole: int, length: int, value: Any, less: Less) -> None:
    """std::__adjust_heap over h[first:first + length] (hole relative to first)."""
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(h[first + child], h[first + child - 1]):
            child -= 1
        h[first + hole] = h[first + child]
        hole = child
    if length & 1 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        h[first + hole] = h[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(h[first + parent], value):
        h[first + hole] = h[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    h[first + hole] = value


class PriorityQueue:
    """std::priority_queue<T, std::vector<T>, Less>: top() is the greatest under `less`."""

    def __init__(self, less: Less) -> None:
        self._h: list = []
        self._less = less

    def __len__(self) -> int:
        return len(self._h)

    def push(self, value: Any) -> None:
        self._h.append(value)
        _sift_up(self._h, len(self._h) - 1, 0, value, self._less)

    def pop(self) -> Any:
        h = self._h
        top = h[0]
        last = h.pop()
        if h:
            _adjust_heap(h, 0, 0, len(h), last, self._less)
        return top


def _heap_sort(a: list, first: int, last: int, less: Less) -> None:
    """std::__partial_sort(first, last, last): make_heap then sort_heap."""
    n = last - first
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(a, first, parent, n, a[first + parent], less)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        value = a[last]
        a[last] = a[first]
        _adjust_heap(a, first, 0, last - first, value, less)


def _median_to_first(a: list, result: int, x: int, y: int, z: int, less: Less) -> None:
    if less(a[x], a[y]):
        pick = y if less(a[y], a[z]) else z if less(a[x], a[z]) else x
    elif less(a[x], a[z]):
        pick = x
    else:
        pick = z if less(a[y], a[z]) else y
    a[result], a[pick] = a[pick], a[result]


def _partition(a: list, first: int, last: int, pivot: int, less: Less) -> int:
    while True:
        while less(a[first], a[pivot]):
            first += 1
        last -= 1
        while less(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _introsort_loop(a: list, first: int, last: int, depth: int, less: Less) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(a, first, last, less)
            return
        depth -= 1
        mid = first + (last - first) // 2
        _median_to_first(a, first, first + 1, mid, last - 1, less)
        cut = _partition(a, first + 1, last, first, less)
        _introsort_loop(a, cut, last, depth, less)
        last = cut


def _linear_insert(a: list, last: int, less: Less) -> None:
    value = a[last]
    nxt = last - 1
    while less(value, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = value


def _insertion_sort(a: list, first: int, last: int, less: Less) -> None:
    for i in range(first + 1, last):
        if less(a[i], a[first]):
            value = a[i]
            a[first + 1 : i + 1] = a[first:i]
            a[first] = value
        else:
            _linear_insert(a, i, less)


def sort(a: list, less: Less) -> None:
    """std::sort(a.begin(), a.end(), less), in place."""
    n = len(a)
    if n < 2:
        return
    _introsort_loop(a, 0, n, 2 * (n.bit_length() - 1), less)
    if n > _THRESHOLD:
        _insertion_sort(a, 0, _THRESHOLD, less)
        for i in range(_THRESHOLD, n):
            _linear_insert(a, i, less)
    else:
        _insertion_sort(a, 0, n, less)
