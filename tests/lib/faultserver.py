#!/usr/bin/env python3
"""A loopback HTTP server for crossroot's tests, serving files from one directory with
injected faults. The first path component picks the behaviour, the rest names the file:

  /ok/F            the file, with Range support
  /404/F           404 Not Found
  /500once/F       500 the first time each file is asked for, then the file
  /500always/F     always 500
  /truncate/F      headers promise the full length, the body stops halfway, connection closed
  /flip/F          the file with some bytes flipped (right length, wrong content)
  /stall/F         headers, then silence (until the client gives up)
  /drip/F          the file, slowly: 4 kB every 50 ms
  /trickle/F       the file, one byte every 0.3 s: never stalled (3 bytes a second), never done
  /reset/F         a few bytes, then a TCP reset
  /loop/F          redirects to itself forever
  /redirect/F      one redirect to /ok/F
  /wronglength/F   Content-Length larger than the body
  /norange/F       the file, ignoring Range (always 200 with the whole body)
  /truncateonce/F  the first request for F is truncated, later ones are served (with Range)
  /truncnorange/F  the first request for F is truncated, later ones ignore Range (200)
  /resetonce/F     the first request for F is reset, later ones are served
  /stallonce/F     the first request for F stalls, later ones are served
  /endless/F       an endless body without Content-Length

Started as `faultserver.py DIR PORTFILE [CERT KEY]`: binds 127.0.0.1 on a free port, writes
the port to PORTFILE, logs each request (method, path, Range) to DIR/../requests.log. With a
certificate and its key it speaks HTTPS."""
import http.server
import os
import socket
import ssl
import struct
import sys
import threading
import time

ROOT = sys.argv[1]
LOG = os.path.join(os.path.dirname(os.path.abspath(ROOT)), "requests.log")
seen = set()
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        parts = self.path.lstrip("/").split("/", 1)
        mode, name = (parts + [""])[:2]
        with lock, open(LOG, "a") as log:
            log.write("%s %s %s\n" % (self.command, self.path, self.headers.get("Range", "-")))
        path = os.path.join(ROOT, os.path.basename(name))
        if mode == "loop":
            return self.redirect(self.path)
        if mode == "redirect":
            return self.redirect("/ok/" + name)
        if mode == "404" or not os.path.isfile(path):
            return self.simple(404, b"not found\n")
        data = open(path, "rb").read()
        if mode == "500always":
            return self.simple(500, b"server error\n")
        if mode == "500once":
            with lock:
                first = name not in seen
                seen.add(name)
            if first:
                return self.simple(500, b"server error\n")
        if mode in ("truncateonce", "truncnorange", "resetonce", "stallonce"):
            with lock:
                first = (mode, name) not in seen
                seen.add((mode, name))
            if first:
                mode = {"truncateonce": "truncate", "truncnorange": "truncate",
                        "resetonce": "reset", "stallonce": "stall"}[mode]
            else:
                mode = "norange" if mode == "truncnorange" else "ok"
        if mode == "flip":
            b = bytearray(data)
            for i in range(0, len(b), max(1, len(b) // 7)):
                b[i] ^= 0x55
            data = bytes(b)
        if mode == "endless":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                chunk = b"x" * 65536
                while True:
                    self.wfile.write(chunk)
            except OSError:
                return
        start = 0
        rng = self.headers.get("Range")
        if rng and mode not in ("norange",) and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0] or 0)
            if start >= len(data):
                return self.simple(416, b"")
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
            if mode != "norange":
                self.send_header("Accept-Ranges", "bytes")
        body = data[start:]
        length = len(body) + (1000 if mode == "wronglength" else 0)
        self.send_header("Content-Length", str(length))
        if mode in ("truncate", "wronglength", "reset", "stall"):
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            if mode == "truncate":
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
            elif mode == "stall":
                self.wfile.flush()
                time.sleep(600)
            elif mode == "reset":
                self.wfile.write(body[:100])
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
            elif mode == "trickle":
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(0.3)
            elif mode == "drip":
                for i in range(0, len(body), 4096):
                    self.wfile.write(body[i:i + 4096])
                    self.wfile.flush()
                    time.sleep(0.05)
            else:
                self.wfile.write(body)
                if mode == "wronglength":
                    self.close_connection = True
        except OSError:
            self.close_connection = True

    def redirect(self, where):
        self.send_response(302)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def simple(self, code, body):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that hang up (killed crossroots, given-up transfers) are expected


server = Server(("127.0.0.1", 0), Handler)
if len(sys.argv) > 4:
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = tls.wrap_socket(server.socket, server_side=True)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
