"""The long-running daemon: the only process that opens the store and loads the model."""

from hallouminate.daemon.server import run

__all__ = ["run"]
