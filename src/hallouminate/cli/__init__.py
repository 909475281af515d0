"""The ``hallouminate`` command line. It talks to the daemon through the protocol, never to the engine."""
