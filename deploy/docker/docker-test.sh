#!/usr/bin/env bash
# `make docker-test`: builds the cpu image on a machine that reaches Debian's and Python's package
# indexes but no image registry, runs it read-only, and checks it: /readyz, one POST /v1/correct,
# a clean exit on SIGTERM. Prints the image size and the time to ready. Run as root (installs
# docker.io and debootstrap when missing, starts dockerd when none answers).
#   BASE=IMAGE to build on another base; PIP_INDEX_URL=URL to install from another index.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${BASE:-gecserve-base:bookworm}
image=${IMAGE:-gecserve:cpu}

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  apt-get update -q >/dev/null && apt-get install -y -q docker.io debootstrap >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  dockerd >/tmp/gecserve-dockerd.log 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start: /tmp/gecserve-dockerd.log" >&2; exit 1; }
fi
if ! docker image inspect "$base" >/dev/null 2>&1; then
  [[ $base == gecserve-base:bookworm ]] || { echo "no image $base" >&2; exit 1; }
  echo "building $base from Debian packages"
  deploy/docker/base-image.sh "$base"
fi

args=(--network host --build-arg "BASE=$base" --target cpu -t "$image")
[[ -n ${PIP_INDEX_URL:-} ]] && args+=(--build-arg "PIP_INDEX_URL=$PIP_INDEX_URL")
echo "building $image"
docker build -q "${args[@]}" . >/dev/null

name=gecserve-docker-test-$$
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT
started=$(date +%s.%N)
docker run -d --name "$name" --read-only --tmpfs /tmp --cap-drop ALL -p 127.0.0.1::8000 "$image" >/dev/null
port=$(docker port "$name" 8000/tcp | head -1 | sed 's/.*://')
python3 - "$port" "$started" <<'PY'
import json, sys, time, urllib.error, urllib.request

port, started = sys.argv[1], float(sys.argv[2])
base = f"http://127.0.0.1:{port}"
deadline = time.time() + 120
while True:
    try:
        with urllib.request.urlopen(f"{base}/readyz", timeout=2) as answer:
            ready = json.load(answer)
            break
    except (urllib.error.URLError, ConnectionError, OSError):
        if time.time() > deadline:
            sys.exit("not ready within 120 s")
        time.sleep(0.2)
print(f"ready: {ready['model']} {ready['version']} {ready['variant']}, {time.time() - started:.1f} s after docker run")
body = json.dumps({"text": "She go to school every days."}).encode()
request = urllib.request.Request(f"{base}/v1/correct", body, {"content-type": "application/json"})
with urllib.request.urlopen(request, timeout=10) as answer:
    result = json.load(answer)
# Both errors get an edit; "goes" and "went" are both right, so the check does not pin the tense.
assert result["text"].startswith("She ") and result["text"].endswith(" every day.") and "She go " not in result["text"], result
print(f"POST /v1/correct: {result['text']!r}, {len(result['edits'])} edits")
# The device engine's files (make web, copied with service/): described, and each one served.
with urllib.request.urlopen(f"{base}/device/model.json", timeout=10) as answer:
    files = json.load(answer)["files"]
for role, file in files.items():
    with urllib.request.urlopen(base + file["url"], timeout=30) as answer:
        assert len(answer.read()) == file["bytes"], role
print(f"device engine: {len(files)} files, {sum(f['bytes'] for f in files.values()) / 1e6:.1f} MB")
PY
docker stop -t 30 "$name" >/dev/null
status=$(docker inspect --format '{{.State.ExitCode}}' "$name")
[[ $status == 0 ]] || { docker logs "$name" | tail -20; echo "exit status $status after SIGTERM" >&2; exit 1; }
echo "SIGTERM: drained and exited 0"
size=$(docker image inspect --format '{{.Size}}' "$image")
echo "image $image: $((size / 1000000)) MB"
