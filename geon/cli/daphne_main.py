"""Daphne as ``python -m daphne`` runs it, except that a websocket that breaks the rules is
closed with a close frame that says why instead of having its TCP connection dropped.

Run it with Daphne's own arguments: ``python -m geon.cli.daphne_main -b 127.0.0.1 -p 8000
geon.asgi:application`` (:func:`geon.cli.serve.daphne_command` builds the command).

Autobahn, under Daphne, fails a connection by dropping it (its ``failByDrop`` option, on by
default) when a client sends a message or frame over Daphne's ``--websocket-max-message-size``
or ``--websocket-max-frame-size``, or breaks the protocol; a browser then sees only 1006 and the
user no reason. With ``failByDrop`` off autobahn sends the close frame of the failure first
(1009 "message too big", 1002 protocol error, 1007 invalid UTF-8), waits for the client's
close as a closing handshake does, and stops reading the oversized message either way: the
rest of its payload is discarded as it arrives, never buffered.

Daphne builds its websocket factory inside ``Server.run``, just before the reactor starts, and
has no option for this; autobahn copies a factory's options into each connection when it opens.
So :class:`Server` sets the option once the reactor runs (before any connection is accepted)
and :class:`CommandLineInterface` is Daphne's own with that server.
"""

from __future__ import annotations

from daphne.cli import CommandLineInterface as DaphneCommandLineInterface
from daphne.server import Server as DaphneServer


class Server(DaphneServer):
    """Daphne's server with autobahn's ``failByDrop`` off on every websocket."""

    def run(self) -> None:
        # daphne.server installed Twisted's asyncio reactor on import: this is the one it runs
        from twisted.internet import reactor

        reactor.callWhenRunning(self.close_failed_websockets)
        super().run()

    def close_failed_websockets(self) -> None:
        """Have autobahn close a failed websocket with a close frame instead of dropping it."""
        self.ws_factory.setProtocolOptions(failByDrop=False)


class CommandLineInterface(DaphneCommandLineInterface):
    """Daphne's command line, serving with :class:`Server`."""

    server_class = Server


if __name__ == "__main__":
    CommandLineInterface.entrypoint()
