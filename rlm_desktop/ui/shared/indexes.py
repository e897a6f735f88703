"""The index Qt hands item models, proxies and delegates."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex

Index = QModelIndex | QPersistentModelIndex
"""A row and column of an item model: Qt passes either kind to the same override."""
