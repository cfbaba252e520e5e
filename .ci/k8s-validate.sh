#!/usr/bin/env bash
# Validate every Kubernetes manifest in deploy/k8s/ against the Kubernetes API's own JSON schemas, offline.
#
#   bash .ci/k8s-validate.sh            # from any directory; .ci/run and .ci/docker-check.sh call it
#
# The validator is PyPI's kubernetes-validate (pinned below), which ships the schemas generated from the Kubernetes
# OpenAPI documents of every minor release from 1.25 on, in a strict form that refuses unknown keys; it is installed
# into a venv of its own, and validating reads no network. Each manifest is validated against the oldest Kubernetes
# the manifests are written for and the newest the validator knows (KUBE_VERSIONS).
#
# The validator itself only warns about a resource it has no schema for (a misspelt kind or an apiVersion that no
# release serves) and exits 0; here that fails, as does a file with no resource: every resource of every file must
# print "passed". Before the real manifests, broken copies of the Job (a misspelt key, a wrong type, a misspelt kind)
# must all be refused, so a validator that passes everything cannot pass CI.
#
# env: K8S_VALIDATE_VENV (/tmp/advisor2048-ci-kubernetes-validate) the venv; KUBE_VERSIONS ("1.25.0 1.37.0").
# time: ~20 s the first time (a 23 MB wheel), ~5 s after.
set -euo pipefail

root=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
cd "$root"
venv="${K8S_VALIDATE_VENV:-/tmp/advisor2048-ci-kubernetes-validate}"
versions=${KUBE_VERSIONS:-1.25.0 1.37.0}

if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  echo "k8s-validate: installing kubernetes-validate into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'kubernetes-validate==1.37.0'
fi

# validate FILE VERSION: prints the validator's lines; 0 only when it exits 0 and every line is a resource passed.
validate() {
  local out status=0
  out=$("$venv/bin/kubernetes-validate" --strict -k "$2" "$1" 2>&1) || status=$?
  [ -n "$out" ] && echo "$out"
  [ "$status" -eq 0 ] && [ -n "$out" ] && ! grep -qv '^INFO .* passed for resource ' <<<"$out"
}

# The canaries: each broken copy of the Job must be refused.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
job=deploy/k8s/simulate-job.yaml
canaries=(
  's/^  completionMode: Indexed$/  completionMod: Indexed/'  # a key Kubernetes does not know
  's/^  completions: [0-9]*$/  completions: "ten"/'         # a number given as text
  's/^kind: Job$/kind: Jobs/'                                # a kind no schema describes
)
for edit in "${canaries[@]}"; do
  broken="$scratch/broken.yaml"
  sed "$edit" "$job" >"$broken"
  if cmp -s "$job" "$broken"; then
    echo "k8s-validate: FAIL: the canary edit '$edit' no longer changes $job; update it" >&2
    exit 1
  fi
  if validate "$broken" "${versions##* }" >"$scratch/out" 2>&1; then
    cat "$scratch/out"
    echo "k8s-validate: FAIL: a broken copy of $job ($edit) was accepted" >&2
    exit 1
  fi
  echo "k8s-validate: refused as it should, $edit: $(grep -v '^INFO' "$scratch/out" | head -1)"
done

failed=0
manifests=(deploy/k8s/*.yaml)
for file in "${manifests[@]}"; do
  for version in $versions; do
    validate "$file" "$version" || { echo "k8s-validate: FAIL: $file against Kubernetes $version" >&2; failed=1; }
  done
done
[ "$failed" -eq 0 ] || exit 1
echo "k8s-validate: ok: ${#manifests[@]} manifests in deploy/k8s against Kubernetes ${versions// /, } (strict)"
