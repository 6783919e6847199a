# cronctl's operator image: Python and the operator on a minimal base made from Debian's packages,
# with no shell, package manager or perl.
#
#   debian  Debian bookworm with python3 and python3-venv (DEBIAN_IMAGE; installed if it lacks them).
#           `scripts/build-image` passes the one it makes with mmdebstrap, which has them; pin the
#           default by digest in production, e.g. --build-arg DEBIAN_IMAGE=debian:12.12-slim@sha256:<digest>.
#   rootfs  scripts/image/make-rootfs.py copies from it only the files of Python's packages and their
#           libraries (no bash, dash, coreutils, perl, apt or dpkg), Debian's record of those
#           packages (/var/lib/dpkg/status, for scanners and the SBOM), the CA bundle and the users.
#   build   the dependencies from requirements.lock only, every file checked against its hash, and
#           cronctl, into a virtual environment; pip and setuptools uninstalled after.
#   final   from scratch: that root file system and that environment, run as a non-root user.
#
# The same file is built by `docker build .` and by `scripts/build-image` (buildah), so the image the
# tests start is the image users build.
ARG DEBIAN_IMAGE=debian:12.12-slim

FROM ${DEBIAN_IMAGE} AS debian
RUN if ! dpkg-query -W -f='${Status}\n' python3-venv 2>/dev/null | grep -q 'install ok installed'; then \
      apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        python3 python3-venv ca-certificates && rm -rf /var/lib/apt/lists/*; \
    fi

FROM debian AS rootfs
COPY scripts/image/make-rootfs.py /make-rootfs.py
RUN python3 /make-rootfs.py /rootfs

FROM debian AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
RUN python3 -m venv /opt/cronctl
COPY requirements.lock scripts/image/slim-venv.py /src/
# slim-venv.py drops what cronctl never imports and compiles the rest (its docstring says what).
RUN /opt/cronctl/bin/pip install --require-hashes --only-binary=:all: --no-deps -r /src/requirements.lock \
 && /opt/cronctl/bin/python /src/slim-venv.py /opt/cronctl
COPY pyproject.toml setup.py README.md LICENSE /src/
COPY crds /src/crds
COPY operator /src/operator
# setup.py takes the version from CRONCTL_VERSION: a build context holds no .git.
ARG VERSION=0+unknown
RUN CRONCTL_VERSION="${VERSION}" /opt/cronctl/bin/pip install --no-deps --no-build-isolation /src \
 && /opt/cronctl/bin/pip uninstall --yes --quiet pip setuptools \
 && /opt/cronctl/bin/python -m compileall -q /opt/cronctl/lib

FROM scratch
ARG VERSION=0+unknown
ARG REVISION=unknown
ARG SOURCE=
LABEL org.opencontainers.image.title="cronctl" \
      org.opencontainers.image.description="A Kubernetes-native cron controller: the cronctl operator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=rootfs /rootfs /
COPY --from=build /opt/cronctl /opt/cronctl
ENV PATH=/opt/cronctl/bin:/usr/bin PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 LANG=C.UTF-8
USER 10001:10001
ENTRYPOINT ["cronctl", "operator"]
CMD ["--liveness", "http://0.0.0.0:8080/healthz"]
