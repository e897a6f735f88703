"""The store's name for the scrubber in `rlm_desktop.redact` (one copy, shared with the engine)."""

from rlm_desktop.redact import REDACTED, Redactor, environment_secrets

__all__ = ["REDACTED", "Redactor", "environment_secrets"]
