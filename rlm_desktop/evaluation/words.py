"""Small word banks the generators draw names and sentences from."""

from __future__ import annotations

ADJECTIVES = (
    "amber", "brisk", "calm", "dusty", "eager", "faint", "gentle", "hollow", "icy", "jolly",
    "keen", "lively", "mellow", "nimble", "odd", "pale", "quiet", "rapid", "silent", "tidy",
    "upbeat", "vivid", "wary", "young", "zesty",
)  # fmt: skip
NOUNS = (
    "anchor", "badger", "canyon", "dragon", "ember", "falcon", "glacier", "harbor", "island",
    "jungle", "kettle", "lantern", "meadow", "nebula", "orchard", "pepper", "quarry", "river",
    "summit", "tunnel", "valley", "walrus", "yonder", "zephyr", "beacon",
)  # fmt: skip
VERBS = (
    "load", "parse", "check", "merge", "split", "render", "store", "fetch", "build", "scan",
    "send", "clean", "index", "score", "track", "route", "sort", "wrap", "count", "trim",
)  # fmt: skip
