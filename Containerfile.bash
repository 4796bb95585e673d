# frun with bash: the static binary plus frun.bash (the bash front end with the loadable builtin),
# sourced by every bash in the image, interactive or not; `parallel` and `xargs` on PATH are frun.
# (Inside a container /dev/shm is usually noexec; frun.bash then unpacks the builtin in a private
# directory under /tmp instead.)
#
# BASE is a Debian bookworm minbase image made without any registry:
#   debootstrap --variant=minbase bookworm rootfs <debian mirror>
#   tar -C rootfs -c . | podman import - localhost/debian-minbase:bookworm
# (packaging/image-test.sh does exactly this). Then, from the repository root:
#   buildah build --timestamp 0 --build-arg VERSION=0.1.0 --build-arg REVISION=<commit> \
#     -f Containerfile.bash -t frun-bash:0.1.0 .
ARG BASE=localhost/debian-minbase:bookworm
FROM ${BASE}

ARG VERSION=0.1.0
ARG REVISION=unknown
# Set to the published repository.
ARG SOURCE=https://github.com/OWNER/frun

LABEL org.opencontainers.image.title="frun-bash" \
      org.opencontainers.image.description="Fast parallel xargs replacement, with its bash front end" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.version="${VERSION}"

COPY --chmod=0755 dist/frun-${VERSION}-x86_64-linux-musl /usr/local/bin/frun
COPY --chmod=0644 dist/frun.bash /usr/local/share/frun/frun.bash
# frun's personalities under the tools' names (the binary dispatches on the name it was started
# by), ahead of Debian's /usr/bin/xargs: scripts written for GNU Parallel or xargs run on frun.
RUN ln -s frun /usr/local/bin/parallel && ln -s frun /usr/local/bin/xargs
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Interactive shells read /etc/bash.bashrc; non-interactive ones (bash -c, scripts) read $BASH_ENV.
RUN printf '%s\n' '[ -r /usr/local/share/frun/frun.bash ] && . /usr/local/share/frun/frun.bash' \
      >>/etc/bash.bashrc
ENV BASH_ENV=/usr/local/share/frun/frun.bash

CMD ["/bin/bash"]
