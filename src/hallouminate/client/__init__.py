"""Talking to the daemon: one multiplexed connection, and finding (or starting) the daemon."""

from hallouminate.client.connection import DaemonConnection, DaemonUnavailable
from hallouminate.client.spawn import connect_or_spawn, stop_daemon

__all__ = ["DaemonConnection", "DaemonUnavailable", "connect_or_spawn", "stop_daemon"]
