#!/usr/bin/env python3
"""An independent OSC receiver for hrm's tests: python-osc's own UDP server and dispatcher parse
every datagram hrm sends (hrm's encoder is not used here).

Binds 127.0.0.1 on a free port, prints `PORT <n>` on stdout, then one JSON line per message
received, in arrival order: {"address": "/avatar/parameters/HR", "args": [72]}. Ends when its
standard input is closed (the test closes it once hrm has exited), after the datagrams already
queued on the socket have been read.

Usage: osc_receiver.py
"""

import json
import sys
import threading

from pythonosc import dispatcher, osc_server


def main():
    lines = []
    lock = threading.Lock()

    def handle(address, *args):
        with lock:
            print(json.dumps({"address": address, "args": list(args)}), flush=True)

    table = dispatcher.Dispatcher()
    table.set_default_handler(handle)
    server = osc_server.BlockingOSCUDPServer(("127.0.0.1", 0), table)
    server.timeout = 0.2
    print(f"PORT {server.server_address[1]}", flush=True)

    done = threading.Event()

    def watch_stdin():
        sys.stdin.read()
        done.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    while not done.is_set():
        server.handle_request()
    # What is still queued on the socket (sent before hrm exited).
    server.timeout = 0
    server.socket.setblocking(False)
    while True:
        try:
            data, client = server.socket.recvfrom(65536)
        except BlockingIOError:
            break
        server.process_request((data, server.socket), client)
    server.server_close()


if __name__ == "__main__":
    main()
