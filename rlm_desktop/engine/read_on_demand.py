"""A sequence whose items are made (read from a file or a database) only when indexed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class ReadOnDemand(Sequence[T]):
    """`count` items, each made by `read(index)` when it is indexed (a slice: a list of them):
    nothing is held between reads. (Its own attributes are private to it: a subclass keeps its
    own `_read` and `_count`.)"""

    def __init__(self, count: int, read: Callable[[int], T]) -> None:
        self.__count = count
        self.__read = read

    def __len__(self) -> int:
        return self.__count

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[position] for position in range(self.__count)[index]]
        return self.__read(range(self.__count)[index])
