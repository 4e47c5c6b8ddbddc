"""TCP for network-enabled calls, through the caseflow egress proxy.

The network servers run in an empty network namespace: the only way out is
the unix socket of the Node egress proxy bound into the sandbox. Installed in
the child before user code runs, this routes every TCP connect of an AF_INET
or AF_INET6 socket (`socket.socket(...).connect`, so `create_connection`,
http.client, urllib and ssl) through it: the proxy resolves the host,
checks every address with the outbound policy, connects to the checked
address and then relays bytes. TLS stays end to end in Python. This is
plumbing, not the boundary: code that bypasses it finds no network at all.
"""
import json
import os
import socket

_RealSocket = socket.socket
_c_connect = socket.socket.connect
_c_setsockopt = socket.socket.setsockopt
_INET = (socket.AF_INET, socket.AF_INET6)
_REPLY_CAP = 4096


class EgressRefused(RuntimeError):
    """The caseflow outbound policy (or a per-call limit) refused the connection."""


def install(path, token):
    """Patches the child's socket module; called once, before user code. The
    methods are replaced on socket.socket itself, so its subclasses (ssl's
    SSLSocket) and the stdlib's create_connection go through the proxy too."""

    def open_tunnel(host, port, timeout):
        tunnel = _RealSocket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            tunnel.settimeout(timeout)
            _c_connect(tunnel, path)
            tunnel.sendall(json.dumps({"token": token, "host": str(host), "port": int(port)}).encode() + b"\n")
            reply = _read_line(tunnel)
        except BaseException:
            tunnel.close()
            raise
        if not reply.get("ok"):
            tunnel.close()
            message = str(reply.get("error") or "refused")
            if reply.get("reason") == "connect-failed":
                raise ConnectionError(message)
            raise EgressRefused(message)
        return tunnel

    def connect(self, address):
        """TCP connects through the proxy: the tunnel's descriptor replaces the
        socket's own, so the object stays the caller's."""
        if self.family not in _INET:
            return _c_connect(self, address)
        if self.type != socket.SOCK_STREAM:
            raise EgressRefused("only TCP connections are possible (through the caseflow egress proxy)")
        tunnel = open_tunnel(address[0], address[1], self.gettimeout())
        try:
            os.dup2(tunnel.fileno(), self.fileno())
        finally:
            tunnel.close()
        # The new descriptor's blocking mode must match this socket's timeout.
        self.settimeout(self.gettimeout())
        return None

    def connect_ex(self, address):
        try:
            connect(self, address)
        except OSError as e:
            return e.errno or 111
        return 0

    def setsockopt(self, level, optname, *value):
        # TCP options belong to the proxy's socket; the tunnel is a unix socket.
        if level == socket.IPPROTO_TCP and self.family in _INET:
            return None
        return _c_setsockopt(self, level, optname, *value)

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        """No DNS in the sandbox: a name is passed on as is and resolved (and
        checked) by the proxy when the socket connects."""
        if host is None:
            raise socket.gaierror(socket.EAI_NONAME, "a host is required")
        host = host.decode() if isinstance(host, bytes) else str(host)
        port = int(port or 0)
        if ":" in host:
            return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port, 0, 0))]
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port))]

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.socket.setsockopt = setsockopt
    socket.getaddrinfo = getaddrinfo


def carry_trace_context(headers):
    """Adds the case's W3C trace context (`traceparent`, `tracestate`) to every
    HTTP request made through http.client, so urllib and requests/urllib3 too.
    The header is written before TLS, so HTTPS requests carry it as plain HTTP
    ones do (the proxy only sees encrypted bytes, it could not add it there).
    A header of that name the code sets itself wins. Called once per network
    call, in its child, before user code."""
    import http.client

    conn = http.client.HTTPConnection
    put_request, put_header, end_headers = conn.putrequest, conn.putheader, conn.endheaders
    context = {str(k).lower(): str(v) for k, v in headers.items()}

    def putrequest(self, *args, **kwargs):
        self._caseflow_trace = dict(context)
        return put_request(self, *args, **kwargs)

    def putheader(self, header, *values):
        name = header.decode("latin-1") if isinstance(header, bytes) else str(header)
        getattr(self, "_caseflow_trace", {}).pop(name.lower(), None)
        return put_header(self, header, *values)

    def endheaders(self, *args, **kwargs):
        for name, value in getattr(self, "_caseflow_trace", {}).items():
            put_header(self, name, value)
        self._caseflow_trace = {}
        return end_headers(self, *args, **kwargs)

    conn.putrequest = putrequest
    conn.putheader = putheader
    conn.endheaders = endheaders


def _read_line(sock):
    """The proxy's one-line answer, read byte by byte so no relayed byte is consumed."""
    data = bytearray()
    while len(data) < _REPLY_CAP:
        b = sock.recv(1)
        if not b:
            break
        if b == b"\n":
            try:
                value = json.loads(bytes(data))
            except ValueError:
                break
            return value if isinstance(value, dict) else {}
        data += b
    raise ConnectionError("the caseflow egress proxy closed the connection without an answer")
