# advisor2048: a 2048 move-advice service, as a small non-root container image.
#
#   docker build -t advisor2048 .
#   docker run --rm -p 2048:2048 advisor2048
#
# Every setting is an ADVISOR_* environment variable (docker run -e ADVISOR_MAX_SEARCHES=4 ...).
# Checked by .ci/docker-check.sh: hadolint, build, run, /healthz, a golden POST /best-move, SIGTERM.

# ---- build stage ------------------------------------------------------------------------------
# Pinned to the toolchain the project builds with (rustc 1.95). The -bookworm suffix fixes the
# Debian release, so the C library and headers the binary is linked against are known.
FROM rust:1.95-bookworm AS build
SHELL ["/bin/bash", "-euo", "pipefail", "-c"]
WORKDIR /src

# The runtime stage is `scratch`, which has no C library, so the binary links glibc statically
# (crt-static). Passing --target explicitly keeps RUSTFLAGS off build scripts and proc-macros,
# which must stay dynamic. Static glibc cannot load NSS plugins, but since glibc 2.34 the `files`
# and `dns` lookups are built in, which is all a container needs (checked: `advisor2048
# healthcheck --url http://localhost:2048/healthz` resolves through the container's /etc/hosts).
ENV CARGO_TERM_COLOR=never \
    CARGO_INCREMENTAL=0 \
    RUSTFLAGS="-C target-feature=+crt-static"

# Dependencies get their own layer: it depends only on Cargo.toml and Cargo.lock, so editing the
# sources rebuilds just the crate. Stub targets stand in for every target Cargo.toml declares.
COPY Cargo.toml Cargo.lock ./
RUN mkdir -p src benches \
 && echo 'fn main() {}' > src/main.rs \
 && echo '' > src/lib.rs \
 && for bench in $(awk '/^\[\[bench\]\]/ { b = 1; next } b && /^name/ { gsub(/"/, "", $3); print $3; b = 0 }' Cargo.toml); do \
      echo 'fn main() {}' > "benches/$bench.rs"; \
    done \
 && cargo build --release --locked --bin advisor2048 \
      --target "$(rustc -vV | sed -n 's/^host: //p')"

# The real sources. openapi.yaml, static/, benches/positions.txt (the `bench` command's
# positions) and the shipped n-tuple network (nets/) are embedded into the binary.
COPY openapi.yaml ./
COPY nets ./nets
COPY static ./static
COPY benches ./benches
COPY src ./src
# COPY keeps the files' own mtimes, which may be older than the stub build; touch them so cargo
# cannot mistake the stub crate for an up-to-date build of the real one.
RUN touch src/lib.rs src/main.rs \
 && target="$(rustc -vV | sed -n 's/^host: //p')" \
 && cargo build --release --locked --bin advisor2048 --target "$target" \
 && install -D -m 0755 "target/$target/release/advisor2048" /out/advisor2048 \
 && /out/advisor2048 --help >/dev/null

# ---- runtime stage ----------------------------------------------------------------------------
# Only the static binary: no shell, no package manager, no C library to patch.
FROM scratch

ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="advisor2048" \
      org.opencontainers.image.description="2048 move-advice service: exact expectimax over a bitboard engine, explained, over HTTP" \
      org.opencontainers.image.source="https://example.invalid/advisor2048" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"

COPY --from=build /out/advisor2048 /usr/local/bin/advisor2048

# Listen on all interfaces inside the container; JSON logs for log collectors.
ENV ADVISOR_LISTEN=0.0.0.0:2048 \
    ADVISOR_LOG_FORMAT=json

# A numeric user that exists nowhere: scratch has no /etc/passwd, and Kubernetes' runAsNonRoot
# can only verify a numeric UID. The service writes no files.
USER 65532:65532
EXPOSE 2048

# No curl in the image: the binary checks itself (GET http://127.0.0.1:2048/healthz, 0 when 200).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/advisor2048", "healthcheck"]

# Exec form: the service is PID 1 and receives SIGTERM itself, and shuts down gracefully.
ENTRYPOINT ["/usr/local/bin/advisor2048", "serve"]
