# cronctl operator image: a slim, pinned Python base; the package is built in a
# throw-away stage so no build tool reaches the runtime image; runs as non-root.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator ./operator
COPY crds ./crds
RUN python -m pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin cronctl
COPY --from=build /wheels /wheels
RUN python -m pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 10001:10001
ENTRYPOINT ["cronctl", "operator"]
CMD ["--liveness", "http://0.0.0.0:8080/healthz"]
