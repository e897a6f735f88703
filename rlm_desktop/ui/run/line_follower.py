"""Keeps the line under the run fields true to the fields as they change, not only at Run.

What the last check said (a notice such as "openai/x on your own server: counted at $0", or a
problem such as "Cannot connect to 127.0.0.1:8080") was said of the models and endpoint chosen
then. Once the root model, the sub-model or the endpoint's address changes, a notice is worded
again for the new ones, and a problem is checked again (nothing is sent to a model) and its new
result shown. A line someone else wrote since (e.g. "Type a question first.") is left alone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject

from rlm_desktop.engine.config import ConfigError
from rlm_desktop.ui.run.checks import CHECKING, Problem
from rlm_desktop.ui.run.controls import RunControls, RunRequest, describe_config_error
from rlm_desktop.ui.shared.widgets import when_settled

if TYPE_CHECKING:
    from rlm_desktop.engine import RunConfig

log = logging.getLogger(__name__)
SETTLE_MS = 300
Fields = tuple[str, str, str | None]
"""What a check depends on: the root model, the sub-model and the endpoint's address."""


class Checker(Protocol):
    """What the follower asks of the run starter (`RunStarter`)."""

    controls: RunControls

    @property
    def running(self) -> bool: ...

    def config_for(self, request: RunRequest) -> RunConfig: ...

    def notice_for(self, request: RunRequest) -> str: ...

    async def checked(self, config: RunConfig) -> list[Problem]: ...


class LineFollower(QObject):
    """Words the line under `starter`'s controls again when the fields it spoke of change."""

    def __init__(self, starter: Checker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.starter = starter
        self._said_for: Fields | None = None
        self._said = ""
        self._problem = False
        self.rechecking: asyncio.Task[None] | None = None
        """The check of the new fields, while it runs."""
        controls = starter.controls
        for picker in (controls.model, controls.sub_model):
            when_settled(picker.currentTextChanged, SETTLE_MS, self.follow, self)
        controls.endpoint.chosen.connect(lambda _name: self.follow())

    def fields(self) -> Fields:
        """The fields as they are now."""
        request = self.starter.controls.request()
        return request.model, request.sub_model or "", request.api_base

    def said(self, text: str, *, problem: bool) -> None:
        """The line now shows `text` about the current fields (`problem`: a pre-flight problem)."""
        self._said_for, self._said, self._problem = self.fields(), text, problem

    def show_notice(self, text: str) -> None:
        """Show the notice `text` about the current fields and remember it."""
        self.starter.controls.show_notice(text)
        self.said(text, problem=False)

    def show_problem(self, problem: Problem) -> None:
        """Show the pre-flight `problem` about the current fields and remember it."""
        self.starter.controls.show_problem(problem.message, problem.setting, problem.fix)
        self.said(problem.message, problem=True)

    def follow(self) -> None:
        """Word the line again if the fields changed since it was said (nothing while a run is
        checked or in progress: the line then speaks of that run)."""
        if self._said_for is None or self.starter.running:
            return
        if self.starter.controls.error.text() != self._said:
            self._said_for = None  # someone else's line since: not ours to change
            return
        if self.fields() == self._said_for:
            return
        if self.rechecking is not None:
            self.rechecking.cancel()
        if self._problem:
            self.starter.controls.show_notice(CHECKING)
            self._said = CHECKING
            self.rechecking = asyncio.ensure_future(self._recheck(self.fields()))
        else:
            self.show_notice(self.starter.notice_for(self.starter.controls.request()))

    async def _recheck(self, fields: Fields) -> None:
        request = self.starter.controls.request()
        try:
            config = self.starter.config_for(request)
            problems = await self.starter.checked(config)
        except ConfigError as exc:
            self.starter.controls.show_error(describe_config_error(exc))
            self._said_for = None
            return
        except Exception:
            log.exception("checking the changed fields failed")
            return
        if self.starter.running or self.fields() != fields:
            return  # a run started, or the fields changed again (their own check follows)
        if problems:
            self.show_problem(problems[0])
        else:
            self.show_notice(self.starter.notice_for(request))
