#!/usr/bin/env bash
# Prove the container image: lint, build, run, health check, a golden request, non-root, SIGTERM.
#
#   bash .ci/docker-check.sh            # from any directory
#
# 0. The manifests in deploy/ are validated against the Kubernetes (.ci/k8s-validate.sh) and Compose schemas.
# 1. ../shared/tools/check-dockerfile.sh lints the Dockerfile (hadolint, warnings fail), makes local
#    stand-ins for the base images, builds the image with podman, runs it and probes /healthz,
#    then stops it and reports how it handled SIGTERM.
# 2. This script runs the built image again, locked down as in deploy/ (read-only root, no
#    capabilities), and checks what the shared tool does not: the image's own HEALTHCHECK turns
#    healthy, `healthcheck` fails against a dead URL, a golden POST /best-move, the other routes,
#    the uid of PID 1, the OCI labels, the image size, and a clean exit (0) on SIGTERM.
#
# Machines here have no Docker engine; podman does the work. Where no engine can run at all, the
# lint still runs and the container checks are reported as SKIPPED with the reason: by hand the
# script then exits 0, under CI=true (.ci/run sets it) it fails with that reason, so CI cannot
# pass without building and running the image.
#
# env: DOCKER_CHECK_PORT (18082) host port for step 2; WORK (/tmp/dockercheck) the tool's cache.
# time (2 cores, measured): cold, nothing cached (debootstrap, stand-ins, dependencies) ~10.5 min;
#      Cargo.toml/Cargo.lock changed ~6.5 min; only src/ changed ~2.5 min; nothing changed ~8 s.
#      The cache is podman's layer store plus $WORK: `podman image prune` throws the layers away.
set -euo pipefail

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
tool="$root/../shared/tools/check-dockerfile.sh"
tag=localhost/advisor2048:ci
port=${DOCKER_CHECK_PORT:-18082}
name=advisor2048-check-$$

log() { echo "== docker-check: $*" >&2; }
fail() { echo "docker-check: FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${CI:-}" = true ]; then
    fail "CI=true, and the container checks cannot run: $* (install podman, or run CI where containers can run)"
  fi
  echo "docker-check: SKIPPED container checks: $* (the Dockerfile was only linted; nothing was built or run)"
  exit 0
}

[ -f "$tool" ] || fail "shared tool not found at $tool"
cd "$root"

# ---- 0. deploy/ against the published schemas (no engine needed) ------------------------------
# tests/deploy_manifests.rs checks what the manifests mean; this checks every key is one that
# Kubernetes / the Compose spec knows, so a misspelt field cannot be silently ignored.
bash .ci/k8s-validate.sh >/dev/null \
  || fail "deploy/k8s does not validate against the Kubernetes schemas (bash .ci/k8s-validate.sh says why)"
venv="${WORK:-/tmp/dockercheck}/deploy-venv"
if [ ! -x "$venv/bin/check-jsonschema" ]; then
  log "installing check-jsonschema into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q check-jsonschema==0.39.0
fi
"$venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml >/dev/null \
  || fail "deploy/compose.yaml does not validate against the Compose spec"
log "ok: deploy/k8s/*.yaml (.ci/k8s-validate.sh: Kubernetes 1.25 and 1.37, strict) and deploy/compose.yaml (Compose spec) validate"

# ---- can a container engine run here? ---------------------------------------------------------
# The shared tool installs podman & co. itself, but without waiting for the apt lock; install them
# first, waiting, so a concurrent apt run cannot fail the check.
if ! command -v podman >/dev/null || ! command -v runc >/dev/null \
   || ! command -v buildah >/dev/null || ! command -v debootstrap >/dev/null; then
  if ! command -v apt-get >/dev/null; then
    bash "$tool" --lint-only -f Dockerfile
    skip "podman is not installed and there is no apt-get to install it"
  fi
  log "installing podman, buildah, runc, debootstrap"
  if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
         podman buildah runc debootstrap >/dev/null; then
    apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null || true
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
      podman buildah runc debootstrap >/dev/null \
      || { bash "$tool" --lint-only -f Dockerfile; skip "podman could not be installed with apt-get"; }
  fi
fi
if ! podman --runtime runc info >/dev/null 2>&1; then
  bash "$tool" --lint-only -f Dockerfile
  skip "podman is installed but cannot start (podman info: $(podman --runtime runc info 2>&1 | tail -1))"
fi

# ---- 1. the shared tool: lint, build, run, probe, SIGTERM -------------------------------------
t0=$(date +%s)
bash "$tool" -f Dockerfile -c . -t "$tag" --run 18080:2048 --probe /healthz
t1=$(date +%s)
log "check-dockerfile.sh passed in $((t1 - t0))s"

# ---- 2. the project's own checks on a running container ---------------------------------------
rt=(--runtime runc)
ul=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
cleanup() { podman "${rt[@]}" rm -f -t 0 "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT

# podman without systemd complains that it cannot set up health check timers; the checks here
# run on demand (`podman healthcheck run`), so drop that one message and pass any other on.
quiet_systemd() { grep -v 'unable to get systemd connection' >&2 || true; }
show_logs() { echo "--- container logs ---" >&2; podman logs "$name" 2>&1 | tail -40 >&2 || true; }
check() {  # check DESCRIPTION CONDITION... : run the condition; fail with the logs when false
  local what=$1; shift
  if "$@"; then log "ok: $what"; else show_logs; fail "$what"; fi
}

version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -1)
labels=$(podman image inspect --format '{{json .Config.Labels}}' "$tag")
for key in title description source version; do
  check "OCI label org.opencontainers.image.$key" \
    grep -q "\"org.opencontainers.image.$key\":\"[^\"]" <<<"$labels"
done
check "OCI version label matches Cargo.toml ($version)" \
  grep -q "\"org.opencontainers.image.version\":\"$version\"" <<<"$labels"

size=$(podman image inspect --format '{{.Size}}' "$tag")
log "image size: $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }'))"

log "podman run $tag (read-only root, no capabilities) on 127.0.0.1:$port"
podman "${rt[@]}" run -d --name "$name" "${ul[@]}" \
  --read-only --cap-drop ALL --security-opt no-new-privileges \
  -p "127.0.0.1:$port:2048" "$tag" 2>&1 >/dev/null | quiet_systemd

# The image's own HEALTHCHECK (`advisor2048 healthcheck`), run by podman inside the container.
healthy=0
for _ in $(seq 1 60); do
  if podman healthcheck run "$name" >/dev/null 2>&1; then healthy=1; break; fi
  sleep 0.5
done
check "HEALTHCHECK (advisor2048 healthcheck) reports healthy" test "$healthy" = 1
check "healthcheck fails against a port nobody listens on" \
  bash -c "! podman exec '$name' /usr/local/bin/advisor2048 healthcheck --url http://127.0.0.1:9/healthz >/dev/null 2>&1"

base="http://127.0.0.1:$port"
for route in /healthz /metrics /openapi.yaml /; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "$base$route" || true)
  check "GET $route answers 200 (got $code)" test "$code" = 200
done

golden='{"board":[[0,0,2,2],[0,4,8,16],[2,4,8,32],[128,64,32,1024]],"profile":"classic","depth":3}'
answer=$(curl -sS -m 30 -H 'content-type: application/json' -d "$golden" "$base/best-move" || true)
direction=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get("direction", ""))' \
  "$answer" 2>/dev/null || true)
check "POST /best-move on the golden board answers right (got '${direction:-?}': ${answer:0:200})" \
  test "$direction" = right

pid=$(podman inspect --format '{{.State.Pid}}' "$name")
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
exe=$(readlink "/proc/$pid/exe" || true)
check "PID 1 is the advisor binary (exec form entrypoint; got $exe)" \
  test "$(basename "$exe")" = advisor2048
check "PID 1 runs as a non-root user (uid $uid)" test "$uid" != 0
rss_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
log "peak resident memory after the checks: $((rss_kb / 1024)) MiB"
# The issue's bound for the server with its network loaded; here it runs as a non-root user on a read-only image,
# where the binary's pages are not its own (see `release_embedded`).
check "peak resident memory within 512 MiB ($((rss_kb / 1024)) MiB)" test "$rss_kb" -le $((512 * 1024))

t0=$(date +%s.%N)
podman "${rt[@]}" stop -t 10 "$name" 2>&1 >/dev/null | quiet_systemd
t1=$(date +%s.%N)
code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
check "SIGTERM leads to a clean exit (exit $code after ${secs}s; 137 means killed)" test "$code" = 0

log "all container checks passed: image $((size / 1000000)) MB, stopped in ${secs}s"
