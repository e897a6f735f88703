"""Provider keys on their way to a cluster node, sealed.

Ray's runtime-environment agent writes every runtime environment it sets up to its log on the
node, so a key passed there in clear would be written on a machine the user may not own. The key
travels sealed in the task's runtime environment instead (Fernet: AES with an HMAC), and the
opening key as the task's argument, which Ray keeps in memory only. A node's disk, and a worker
process between trials, hold only the ciphertext; the key is open only inside a running trial.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlm_desktop.engine import Credentials

SEALED_KEY_VARIABLE = "RLM_DESKTOP_SEALED_API_KEY"
"""The environment variable of a trial's task that holds its sealed API key."""


@dataclass(frozen=True)
class Sealed:
    """A sealed key (`ciphertext`, for the runtime environment) and what opens it (`opener`,
    for the task's argument). `ciphertext` is empty for a run without a key."""

    ciphertext: str
    opener: bytes

    def __repr__(self) -> str:
        return "Sealed(***)"


class Sealer:
    """Seals keys under one opening key of its own (one per evaluation or batch sitting), each
    key always to the same ciphertext, so trials with the same key share a runtime environment
    and Ray can reuse its workers (a new one costs seconds of imports)."""

    def __init__(self) -> None:
        from cryptography.fernet import Fernet

        self._opener = Fernet.generate_key()
        self._fernet = Fernet(self._opener)
        self._sealed: dict[str, str] = {}

    def seal(self, credentials: Credentials) -> Sealed:
        """`credentials` sealed."""
        key = credentials.api_key
        if not key:
            return Sealed("", self._opener)
        if key not in self._sealed:
            self._sealed[key] = self._fernet.encrypt(key.encode()).decode()
        return Sealed(self._sealed[key], self._opener)

    def __repr__(self) -> str:
        return "Sealer(***)"


def unseal(ciphertext: str, opener: bytes) -> Credentials:
    """The credentials `seal` sealed; `ValueError` when the ciphertext is not theirs."""
    from cryptography.fernet import Fernet, InvalidToken

    if not ciphertext:
        return Credentials()
    try:
        return Credentials(api_key=Fernet(opener).decrypt(ciphertext.encode()).decode())
    except InvalidToken:
        raise ValueError("the API key sent with the trial could not be opened") from None
