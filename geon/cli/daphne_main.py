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

Twisted's HTTP request, under Daphne, also parses every ``multipart/form-data`` body into its own
``args`` before Daphne hands the body to Django, which parses it again: a second copy of each
upload (an ONNX model of up to 64 MiB) that nothing reads, and a malformed form (a body of only
its closing boundary) answered with an empty 400 of Twisted's instead of geon's JSON refusal.
:class:`Server` has its requests built with that parsing off (:class:`UnparsedRequest`).
"""

from __future__ import annotations

from typing import Any

from daphne.cli import CommandLineInterface as DaphneCommandLineInterface
from daphne.http_protocol import WebRequest
from daphne.server import Server as DaphneServer


class UnparsedRequest(WebRequest):
    """Daphne's request, leaving form bodies to Django (Twisted would parse them first)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, parsePOSTFormSubmission=False, **kwargs)


class Server(DaphneServer):
    """Daphne's server with autobahn's ``failByDrop`` off on every websocket, and HTTP requests
    whose form bodies only Django parses."""

    def run(self) -> None:
        # daphne.server installed Twisted's asyncio reactor on import: this is the one it runs
        from twisted.internet import reactor

        reactor.callWhenRunning(self.close_failed_websockets)
        reactor.callWhenRunning(self.leave_forms_to_django)
        super().run()

    def leave_forms_to_django(self) -> None:
        """Build every HTTP request as :class:`UnparsedRequest` (Daphne's factory sets its own
        request class on each connection, so the factory's protocols are set after it)."""
        build = self.http_factory.buildProtocol

        def build_protocol(addr: Any) -> Any:
            protocol = build(addr)
            if protocol is not None:
                protocol.requestFactory = UnparsedRequest
            return protocol

        self.http_factory.buildProtocol = build_protocol

    def close_failed_websockets(self) -> None:
        """Have autobahn close a failed websocket with a close frame instead of dropping it."""
        self.ws_factory.setProtocolOptions(failByDrop=False)


class CommandLineInterface(DaphneCommandLineInterface):
    """Daphne's command line, serving with :class:`Server`."""

    server_class = Server


if __name__ == "__main__":
    CommandLineInterface.entrypoint()
