# cronctl's operator image.
#
# The base is PYTHON_IMAGE (Python 3.11 or newer with its venv module). Pin it by digest in
# production, e.g. --build-arg PYTHON_IMAGE=python:3.11.11-slim-bookworm@sha256:<digest>, so a
# rebuild cannot pick up another base; `scripts/build-image` builds one from Debian's packages.
#
# Dependencies come from requirements.lock only, every file checked against its hash. They are
# installed into a virtual environment in a throw-away stage; the runtime stage copies that
# environment alone, with no pip, setuptools, wheel files or compiler in any of its layers, and
# runs as a non-root user.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
RUN python -m venv /opt/cronctl
COPY requirements.lock /src/
RUN /opt/cronctl/bin/pip install --require-hashes --only-binary=:all: --no-deps -r /src/requirements.lock
COPY pyproject.toml README.md LICENSE /src/
COPY crds /src/crds
COPY operator /src/operator
# kubernetes/aio (68 MB, half the environment) is the client's asyncio twin, which neither cronctl
# nor kopf imports; tests/kube/test_image.py runs the operator from the image built without it.
RUN /opt/cronctl/bin/pip install --no-deps --no-build-isolation /src \
 && /opt/cronctl/bin/pip uninstall --yes --quiet pip setuptools \
 && rm -rf /opt/cronctl/lib/python3*/site-packages/kubernetes/aio \
 && /opt/cronctl/bin/python -m compileall -q /opt/cronctl/lib

FROM ${PYTHON_IMAGE}
ARG VERSION=unknown
ARG REVISION=unknown
ARG SOURCE=
LABEL org.opencontainers.image.title="cronctl" \
      org.opencontainers.image.description="A Kubernetes-native cron controller: the cronctl operator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
# The base's own installers go: nothing in the running image can fetch or build a package.
RUN rm -rf /usr/local/bin/pip* /usr/local/lib/python3*/site-packages/pip* \
           /usr/local/lib/python3*/site-packages/setuptools* /usr/local/lib/python3*/site-packages/wheel* \
           /usr/local/lib/python3*/ensurepip /usr/lib/python3*/ensurepip /usr/share/python-wheels \
 && useradd --uid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin cronctl
COPY --from=build /opt/cronctl /opt/cronctl
ENV PATH=/opt/cronctl/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 10001:10001
ENTRYPOINT ["cronctl", "operator"]
CMD ["--liveness", "http://0.0.0.0:8080/healthz"]
