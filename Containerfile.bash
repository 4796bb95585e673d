# frun with bash: the static binary plus frun.bash (the bash front end with the loadable builtin),
# sourced by every bash in the image, interactive or not; `parallel`, `sem` and `xargs` on PATH
# are frun.
# (Inside a container /dev/shm is usually noexec; frun.bash then unpacks the builtin in a private
# directory under /tmp instead.)
#
# From a checkout, with nothing else to do first:
#   docker build -f Containerfile.bash -t frun-bash .      (or podman build ...)
#   docker run --rm frun-bash bash -c 'f() { echo "<$1>"; }; seq 3 | frun -k -l1 f'
# The first stage builds the static binary and frun.bash exactly as a release is built
# (packaging/build.sh --only-static and --only-blobs). Build arguments: REVISION (the commit),
# VERSION, SOURCE (labels), RUST_IMAGE (the build stage's base: Debian bookworm with Rust in
# /usr/local/cargo, as the official rust images are), BASE (the image's base: Debian bookworm).
ARG RUST_IMAGE=docker.io/library/rust:1.95.0-bookworm
ARG BASE=docker.io/library/debian:bookworm-slim
FROM ${RUST_IMAGE} AS build
ENV RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo
ENV PATH=/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      binutils bzip2 ca-certificates curl gcc libc6-dev make musl-tools pkg-config python3 python3-venv >/dev/null \
 && rm -rf /var/lib/apt/lists/*
COPY . /src
ARG REVISION=unknown
# The Rust release is the base image's own (RUSTUP_TOOLCHAIN, over rust-toolchain.toml's
# `stable`, which rustup would otherwise fetch anew): with the release's Rust, the same bytes.
# The build's tools, crates and target directory live in a cache mount that BuildKit and Buildah
# keep between builds (shared with Containerfile's build stage).
RUN --mount=type=cache,id=frun-build,target=/cache \
    cd /src \
 && export FRUN_TOOLS_DIR=/cache/tools CARGO_HOME=/cache/cargo FRUN_BUILD_DIR=/cache/target \
 && export RUSTUP_TOOLCHAIN="$(rustup default | cut -d' ' -f1)" \
 && export FRUN_GIT_COMMIT=${REVISION} \
 && bash packaging/build.sh --only-static --out /out/static \
 && bash packaging/build.sh --only-blobs --out /out/blobs \
 && mkdir -p /out/image \
 && mv /out/static/frun-*-x86_64-linux-musl /out/image/frun \
 && mv /out/blobs/frun.bash /out/image/frun.bash

FROM ${BASE}
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=https://github.com/frun-rs/frun
LABEL org.opencontainers.image.title="frun-bash" \
      org.opencontainers.image.description="Fast parallel xargs replacement, with its bash front end" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"

COPY --from=build --chmod=0755 /out/image/frun /usr/local/bin/frun
COPY --from=build --chmod=0644 /out/image/frun.bash /usr/local/share/frun/frun.bash
# frun's personalities under the tools' names (the binary dispatches on the name it was started
# by), ahead of Debian's /usr/bin/xargs: scripts written for GNU Parallel or xargs run on frun.
RUN ln -s frun /usr/local/bin/parallel && ln -s frun /usr/local/bin/sem && ln -s frun /usr/local/bin/xargs
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Interactive shells read /etc/bash.bashrc; non-interactive ones (bash -c, scripts) read $BASH_ENV.
RUN printf '%s\n' '[ -r /usr/local/share/frun/frun.bash ] && . /usr/local/share/frun/frun.bash' \
      >>/etc/bash.bashrc
ENV BASH_ENV=/usr/local/share/frun/frun.bash

CMD ["/bin/bash"]
