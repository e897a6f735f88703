"""The evaluation form's fields kept in the preferences (`evaluation/*`), for the next page and
the next start; what no longer holds falls back to its default (`evaluation.form_fields`)."""

from __future__ import annotations

from dataclasses import fields

from rlm_desktop import paths
from rlm_desktop.engine.config import ConfigError
from rlm_desktop.engine.profiles import list_profiles
from rlm_desktop.evaluation.form_fields import FormFields, restored
from rlm_desktop.ui.shared.preferences import Preferences

SECTION = "evaluation"


def profile_names() -> list[str] | None:
    """The prompt profiles that can be chosen now (None when they cannot be read)."""
    try:
        return [profile.name for profile in list_profiles(paths.profile_folders())]
    except (ConfigError, OSError):
        return None


def remembered_fields(prefs: Preferences, defaults: FormFields) -> FormFields:
    """The fields the last page was left with, each one missing or no longer valid from
    `defaults`."""
    saved = {f.name: prefs.get(f"{SECTION}/{f.name}") for f in fields(FormFields)}
    present = {name: value for name, value in saved.items() if value is not None}
    return restored(present, defaults, profile_names())


def remember_fields(prefs: Preferences, form_fields: FormFields) -> None:
    """Keep the form's fields for the next page, in one write."""
    prefs.set_many({f"{SECTION}/{name}": v for name, v in form_fields.saved().items()})
