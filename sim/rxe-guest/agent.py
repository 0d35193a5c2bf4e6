#!/usr/bin/env python3
"""Client for the rxe guest's agent (virtio-serial port rnic.agent, exposed by
QEMU as a unix socket: -chardev socket,path=AGENT_SOCK,server=on,wait=off).

    agent.py AGENT_SOCK [--ready] [--timeout S] [CMD ...]

--ready   wait for the guest's first line, "@@rnic-ready <gid1> <mtu>" (it is
          sent once, to the first client), print it, fail on "@@rnic-failed".
CMD       each is sent as one line; its output is printed as it comes and
          the "@@rnic-exit <rc>" that ends it is consumed. The special command
          "poweroff" powers the guest off.
Exit status: 0 if all commands exited 0, else the last non-zero rc; 124 on a
timeout, 1 if the guest reported @@rnic-failed or the connection closed.
Timing (connect, ready) goes to stderr.
"""
import argparse
import socket
import sys
import time


class Agent:
    def __init__(self, path, connect_timeout):
        deadline = time.monotonic() + connect_timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                s.close()
                if time.monotonic() > deadline:
                    raise SystemExit(f"agent.py: cannot connect to {path}")
                time.sleep(0.1)
        self.s = s
        self.buf = b""

    def readline(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.s.settimeout(left)
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                raise TimeoutError
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def send(self, line):
        self.s.sendall(line.encode() + b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sock")
    ap.add_argument("--ready", action="store_true", help="wait for @@rnic-ready first")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per step (default 300)")
    ap.add_argument("--connect-timeout", type=float, default=30)
    ap.add_argument("cmds", nargs="*")
    a = ap.parse_intermixed_args()

    t0 = time.monotonic()
    ag = Agent(a.sock, a.connect_timeout)
    print(f"agent.py: connected after {time.monotonic() - t0:.2f} s", file=sys.stderr)
    status = 0
    try:
        if a.ready:
            deadline = time.monotonic() + a.timeout
            while True:
                line = ag.readline(deadline)
                if line.startswith("@@rnic-ready") or line.startswith("@@rnic-failed"):
                    print(line, flush=True)
                    print(f"agent.py: {line.split()[0][2:]} after {time.monotonic() - t0:.2f} s", file=sys.stderr)
                    if line.startswith("@@rnic-failed"):
                        return 1
                    break
                print(f"agent.py: unexpected line before ready: {line!r}", file=sys.stderr)
        for cmd in a.cmds:
            ag.send(cmd)
            deadline = time.monotonic() + a.timeout
            while True:
                line = ag.readline(deadline)
                if line.startswith("@@rnic-exit "):
                    rc = int(line.split()[1])
                    if rc != 0:
                        status = rc
                        print(f"agent.py: '{cmd}' exited {rc}", file=sys.stderr)
                    break
                print(line, flush=True)
            if cmd.strip() == "poweroff":
                break
    except TimeoutError:
        print("agent.py: timeout", file=sys.stderr)
        return 124
    except EOFError:
        print("agent.py: connection closed by QEMU", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
