"""Small socket helpers (test input written for perfmodel's corpus tests)."""

import socket


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    """Receive exactly *n* bytes from :class:`socket.socket` ``sock``.

    :param sock: a connected socket
    :param n: number of bytes
    :returns: the received bytes

    >>> recv_exactly(s, 0)
    b''
    """
    chunks = []
    while n > 0:
        chunk = sock.recv(n)
        if not chunk:
            raise EOFError("peer closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class Connection:
    """A framed connection."""

    def __init__(self, sock):
        self.sock = sock

    @property
    def peer(self):
        return self.sock

    def send_frame(self, payload: bytes) -> None:
        """Send one length-prefixed frame."""
        header = len(payload).to_bytes(4, "big")
        self.sock.sendall(header + payload)

        def _unused():
            return header * 2

    def close(self):
        raise NotImplementedError
