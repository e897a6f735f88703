"""Provider keys on their way to a cluster node, sealed.

Ray's runtime-environment agent writes every runtime environment it sets up to its log on the
node, so a key passed there in clear would be written on a machine the user may not own. The key
travels sealed in the task's runtime environment instead (Fernet: AES with an HMAC), and the
one-time opening key as the task's argument, which Ray keeps in memory. Each trial gets its own
opening key; a node sees only the ciphertext on disk.
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


def seal(credentials: Credentials) -> Sealed:
    """`credentials` sealed under a new one-time key."""
    from cryptography.fernet import Fernet

    opener = Fernet.generate_key()
    if not credentials.api_key:
        return Sealed("", opener)
    return Sealed(Fernet(opener).encrypt(credentials.api_key.encode()).decode(), opener)


def unseal(ciphertext: str, opener: bytes) -> Credentials:
    """The credentials `seal` sealed; `ValueError` when the ciphertext is not theirs."""
    from cryptography.fernet import Fernet, InvalidToken

    if not ciphertext:
        return Credentials()
    try:
        return Credentials(api_key=Fernet(opener).decrypt(ciphertext.encode()).decode())
    except InvalidToken:
        raise ValueError("the API key sent with the trial could not be opened") from None
