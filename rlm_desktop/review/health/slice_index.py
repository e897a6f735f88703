"""Where in the documents each hashed slice was first seen, in 18 bytes a slice.

Coverage (`coverage.py`) indexes the `width`-character slice of the documents at every
`stride`-th position by its hash. Held in a dict of tuples that cost about 200 bytes a slice (six
times the text: 1.2 GB for 200 MB of documents). Here the hashes are a sorted array with, beside
it, where each was first seen (8 + 8 bytes a slice), and a bitmap of about 16 bits a slice says
at the cost of a dict lookup whether a hash may be there at all: a scan's probes mostly miss, and
a miss never reaches the array. The hashes are Python's own (`hash` of the slice: randomized per
process, so a document cannot be written to make slices collide).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_BITS_PER_SLICE = 16
_LEAST_BITS = 1 << 16
_FILL_CHUNK = 1 << 18


class SliceIndex:
    """The `width`-character slices of `texts` at every `stride`-th position, by hash."""

    def __init__(
        self, texts: Sequence[str], width: int, stride: int, lengths: Sequence[int] = ()
    ) -> None:
        """`lengths`, when given, are the texts' (so texts read back one at a time are read once)."""
        lengths = lengths or [len(text) for text in texts]
        counts = [max(0, (length - width) // stride + 1) for length in lengths]
        self._starts = np.cumsum([0, *counts], dtype=np.int64)
        self._stride = stride
        hashes = np.empty(int(self._starts[-1]), dtype=np.int64)
        for number, count in enumerate(counts):
            if count:
                text = texts[number]
                begin = int(self._starts[number])
                hashes[begin : begin + counts[number]] = np.fromiter(
                    (hash(text[p : p + width]) for p in range(0, counts[number] * stride, stride)),
                    dtype=np.int64,
                    count=counts[number],
                )
        # Sorted stably, equal hashes keep the order of their slices: the first place of a
        # hash is where `searchsorted` lands, and no deduplicated copies are made.
        self._first = np.argsort(hashes, kind="stable")
        hashes.sort(kind="stable")
        self._keys = hashes
        bits = _LEAST_BITS
        while bits < _BITS_PER_SLICE * len(self._keys):
            bits *= 2
        self._mask = bits - 1
        words = np.zeros(bits // 64, dtype=np.uint64)
        for begin in range(0, len(self._keys), _FILL_CHUNK):  # temporaries of a few MB
            where = (self._keys[begin : begin + _FILL_CHUNK] & self._mask).astype(np.uint64)
            np.bitwise_or.at(words, where >> np.uint64(6), np.uint64(1) << (where & np.uint64(63)))
        self._bitmap = words.view(np.uint8).tobytes()  # bytes: the fastest to index from Python

    def get(self, slice_hash: int) -> tuple[int, int] | None:
        """`(document number, position)` of the first slice with this hash, or None."""
        bit = slice_hash & self._mask
        if not self._bitmap[bit >> 3] >> (bit & 7) & 1:
            return None
        at = int(np.searchsorted(self._keys, slice_hash))
        if at == len(self._keys) or self._keys[at] != slice_hash:
            return None
        window = int(self._first[at])  # the leftmost of equal hashes: the first slice
        number = int(np.searchsorted(self._starts, window, side="right")) - 1
        return number, (window - int(self._starts[number])) * self._stride

    @property
    def nbytes(self) -> int:
        """What the index holds, in bytes."""
        return int(self._keys.nbytes + self._first.nbytes + self._starts.nbytes) + len(
            self._bitmap
        )
