# gecserve: the two commands are `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MODEL ?= models/gec-default

.PHONY: serve web docs test test-fast test-unit lint fixture model model-v4 bench bench-gpu ab loadtest loadtest-steps loadtest-measure proto clean docker-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[build,dev]"
	touch $@ $(VENV)/.runtime

## Set up and run the service with the bundled default model.
serve: $(VENV)/.runtime web
	$(BIN)/gecserve serve --model $(MODEL)

## The device engine's runtime, pinned by package-lock.json: onnxruntime-web's wasm build and the Hugging Face
## tokenizer, copied where the service serves them from (DEVICE_VENDOR, not committed; the image copies it too).
## Without npm it is skipped, saying so: the service runs, and its device engine says it is unavailable.
DEVICE_VENDOR := service/web/static/vendor/device
web: $(DEVICE_VENDOR)/.installed
$(DEVICE_VENDOR)/.installed: package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --no-audit --no-fund --ignore-scripts --loglevel=error && mkdir -p $(DEVICE_VENDOR) && \
		cp node_modules/onnxruntime-web/dist/ort.wasm.bundle.min.mjs node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm \
			node_modules/@huggingface/tokenizers/dist/tokenizers.min.mjs $(DEVICE_VENDOR)/ && \
		node -p "['onnxruntime-web', '@huggingface/tokenizers'].map((n) => { const p = require('./node_modules/' + n + '/package.json'); \
			const home = p.homepage || (p.repository && (p.repository.url || p.repository)); return p.name + ' ' + p.version + ' (' + p.license + ' licence, ' + home + ')'; }).join('\\n')" > $(DEVICE_VENDOR)/NOTICE && \
		touch $@; \
	else echo "npm not found: the device engine will be unavailable (install Node.js 20 and npm, then make web)"; fi

LINTED := service models tests bench tools

## The documentation site, docs/ (mkdocs.yml), built into site/ (git-ignored) in strict mode: a broken link, a
## missing page or anchor, or a page left out of the nav fails it. About a second.
MKDOCS = NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs
docs: $(VENV)/.dev
	$(MKDOCS) build --strict --quiet

## Set up and pass the tests: the linters and the type checker, unit and integration tests, slow ones included (load
## runs live in bench/), and the docs.
test: $(VENV)/.dev web
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy
	$(MKDOCS) build --strict --quiet
	$(BIN)/python -m pytest -q

## The tests without those marked slow (real servers under load, several processes, a browser).
test-fast: $(VENV)/.dev web
	$(BIN)/python -m pytest -q -m "not slow"

## The unit tests alone: none starts a gecserve process (none is marked `server`, so none of the slow ones).
test-unit: $(VENV)/.dev
	$(BIN)/python -m pytest -q -m "not server and not slow"

## Build the cpu image here (a local Debian base: no registry is reachable), run it, check /readyz
## and one /v1/correct, print its size and time to ready (deploy/docker/docker-test.sh; root).
docker-test: web
	deploy/docker/docker-test.sh

## ruff, and mypy strict on what pyproject.toml's [tool.mypy] names (its cache in .mypy_cache: a few seconds cold,
## under one warm).
lint: $(VENV)/.dev
	$(BIN)/ruff check $(LINTED)
	$(BIN)/mypy

## Regenerate the tiny test model (trains about a minute, exports through the real exporter).
fixture: $(VENV)/.dev
	$(BIN)/python -m models.fixture --out tests/fixtures/tiny-gec

## Rebuild the default model (version 5) from ../shared/data: about 9 minutes of training on an NVIDIA GPU
## (LEASE_DEVICE; on a lent machine, models/README.md), then packaging and calibration here (see models/README.md).
LEASE_DEVICE ?= cuda
model: $(VENV)/.dev
	$(BIN)/python -m models.gec.clean_set --data ../shared/data --out runs/clean-set.tsv
	$(BIN)/python -m models.gec.bundle --data ../shared/data --clean runs/clean-set.tsv \
		--tokenizer models/gec-v4/tokenizer.json --sentences 1400000 --out .gpu/bundle
	$(BIN)/python -m models.gec.lease train --bundle .gpu/bundle --run runs/lease --out runs/lease-returned \
		--device $(LEASE_DEVICE) --deadline-minutes 9.1 --reserve-minutes 0.8
	$(BIN)/python -m models.gec.lease receive --returned runs/lease-returned --run runs/gec-v5
	$(BIN)/python -m models.gec.package --run runs/gec-v5 --out $(MODEL) --version 5 --data ../shared/data \
		--keep-bias 0.9
	$(BIN)/python -m models.gec.calibrate --model $(MODEL) --data ../shared/data --keep-bias 0.2
	$(BIN)/python -m models.gec.calibrate --device --model $(MODEL) --data ../shared/data --keep-bias 0.9

## Rebuild version 4 (models/gec-v4, an arm) and the versions it continued, on the CPU (hours; models/README.md).
model-v4: $(VENV)/.dev
	$(BIN)/python -m models.gec.recipe --data ../shared/data --run runs/gec-v2 --device cpu
	$(BIN)/python -m models.gec.package --run runs/gec-v2 --out models/gec-v2 --version 2 --data ../shared/data
	$(BIN)/python -m models.gec.unpack --model models/gec-v2 --out runs/gec-v2-hf
	$(BIN)/python -m models.gec.recipe --data ../shared/data --run runs/gec-v3 --init runs/gec-v2-hf \
		--schedule cpu-finetune --seed 3
	$(BIN)/python -m models.gec.package --run runs/gec-v3 --out models/gec-v3 --version 3 --continues models/gec-v2 \
		--data ../shared/data
	$(BIN)/python -m models.gec.calibrate --model models/gec-v3 --data ../shared/data
	$(BIN)/python -m models.gec.unpack --model models/gec-v3 --out runs/gec-v3-hf
	$(BIN)/python -m models.gec.clean_set --data ../shared/data --out runs/clean-set.tsv
	$(BIN)/python -m models.gec.teacher --data ../shared/data --model runs/gec-v3-hf \
		--language-model models/gec-v3/ngrams.npz --out runs/teacher
	$(BIN)/python -m models.gec.recipe --data ../shared/data --run runs/gec-v4 --init runs/gec-v3-hf \
		--schedule cpu-mixture --teacher runs/teacher/flagged.tsv --exclude runs/clean-set.tsv --seed 4
	$(BIN)/python -m models.gec.recipe --data ../shared/data --run runs/gec-v4b --init runs/gec-v4/hf \
		--schedule cpu-mixture --teacher runs/teacher/flagged.tsv --exclude runs/clean-set.tsv --seed 5
	$(BIN)/python -m models.gec.package --run runs/gec-v4b --out models/gec-v4 --version 4 --continues models/gec-v3 \
		--data ../shared/data --keep-bias 0.45
	$(BIN)/python -m models.gec.calibrate --model models/gec-v4 --data ../shared/data --keep-bias 0.2
	$(BIN)/python -m models.gec.calibrate --device --model models/gec-v4 --data ../shared/data --keep-bias 0.45

## The shipped model's weights as a transformers checkpoint: the CTranslate2 peer of `make bench`.
runs/gec-default-hf: $(VENV)/.dev
	$(BIN)/python -m models.gec.unpack --model $(MODEL) --out $@
## The shipped weights as fp32 and fp16 graphs with the shipped folder's serving files: the model of a GPU.
runs/gec-default-gpu: runs/gec-default-hf
	$(BIN)/gecserve export --from $< --out $@ --fp16 --name $(notdir $(MODEL)) \
		--version $$($(BIN)/python -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' $(MODEL)/manifest.json)
	$(BIN)/python -m models.gec.carry --from $(MODEL) --to $@
## The GPU tables of docs/benchmarks.md (docs/benchmarks/gpu-*.json): on an NVIDIA GPU, with onnxruntime-gpu in the venv.
GPU_MODEL := runs/gec-default-gpu
GPU_SERVE = GECSERVE_PROVIDER=cuda $(BIN)/gecserve bench serve --spawn $(GPU_MODEL) --input $(DEV)
GPU_LAYOUT = $(GPU_SERVE) --backend accelerated --client-processes 6 --concurrency 1,32,128,512 --requests 1200
bench-gpu: $(VENV)/.dev $(GPU_MODEL)
	$(BIN)/gecserve bench decoding --model $(GPU_MODEL) --provider cuda --variant fp32 --input $(DEV) --limit 300 \
		--batch-size 1,8,32,128 --strategies greedy,aggressive,unsplit,beam,oracle --pass-cost 16 \
		--json $(BENCH)/gpu-decoding-fp32.json
	$(BIN)/gecserve bench decoding --model $(GPU_MODEL) --provider cuda --variant fp16 --input $(DEV) --limit 300 \
		--batch-size 1,8,32,128 --strategies greedy,aggressive,beam --json $(BENCH)/gpu-decoding-fp16.json
	$(BIN)/gecserve bench decoding --model $(GPU_MODEL) --provider cuda --variant fp32 \
		--input ../shared/data/dev/jfleg.dev.src --limit 300 --batch-size 1,32 --strategies greedy,aggressive,oracle \
		--json $(BENCH)/gpu-decoding-jfleg.json
	$(GPU_SERVE) --concurrency 1,32,128 --requests 400 --json $(BENCH)/gpu-serve.json
	GECSERVE_MAX_BATCH_SIZE=128 $(GPU_SERVE) --concurrency 128 --requests 600 --json $(BENCH)/gpu-serve-b128.json
	GECSERVE_MAX_BATCH_SIZE=8 $(GPU_SERVE) --concurrency 32 --requests 400 --json $(BENCH)/gpu-serve-b8.json
	GECSERVE_MODEL_VARIANT=fp16 $(GPU_SERVE) --concurrency 1,32 --requests 400 --json $(BENCH)/gpu-serve-fp16.json
	$(GPU_LAYOUT) --json $(BENCH)/layout/gpu-one.json
	GECSERVE_FRONT_ENDS=8 $(GPU_LAYOUT) --json $(BENCH)/layout/gpu-front-ends-8.json
	GECSERVE_FRONT_ENDS=8 $(GPU_LAYOUT) --queue redis://127.0.0.1:6379/0 --workers 2 --json $(BENCH)/layout/gpu-scaleout-8x2.json
## The benchmark tables of docs/benchmarks.md (JSON in docs/benchmarks/), with the CTranslate2 peer row on the
## same weights (PEER= to leave it out).
DEV := ../shared/data/dev/fce.dev.detok.src
BENCH := docs/benchmarks
PEER ?= runs/gec-default-hf
bench: $(VENV)/.dev $(PEER)
	$(BIN)/gecserve bench decoding --model $(MODEL) --input $(DEV) --limit 500 --batch-size 1,8,32 \
		--strategies greedy,aggressive,relaxed,beam --cache compact,masked \
		$(if $(PEER),--peer-ct2 $(PEER)) --json $(BENCH)/decoding.json
	$(BIN)/gecserve bench serve --spawn $(MODEL) --input $(DEV) --concurrency 1,32 --requests 400 \
		$(if $(PEER),--peer-ct2 $(PEER)) --json $(BENCH)/serve.json
	$(BIN)/gecserve bench preprocess --model $(MODEL) --input $(DEV) --json $(BENCH)/preprocess.json

## The A/B run of docs/benchmarks/ab-fce-dev.json: both arms at a fixed offered load, read back from the server.
AB_RATE ?= 10
AB_DURATION ?= 180
ab: $(VENV)/.dev
	$(BIN)/python -m bench.served.ab --spawn $(MODEL) --experiment deploy/experiments/accelerated-vs-autoregressive.yaml \
		--input $(DEV) --rate $(AB_RATE) --duration $(AB_DURATION) --json $(BENCH)/ab-fce-dev.json \
		--screenshot docs/dashboard.png

## Locust against a running server (`make serve` in another shell), headless: Locust's CSV and HTML
## report and bench.served.report's markdown and plots in bench/results/ (git-ignored).
## ARM= forces an arm (empty: the server assigns); USER_CLASSES= EditorUser etc. (empty: all, weighted).
LOCUST_HOST ?= http://127.0.0.1:8000
USERS ?= 20
SPAWN_RATE ?= 5
DURATION ?= 1m
ARM ?=
USER_CLASSES ?=
LOCUST_ARGS ?=
RESULTS := bench/results
LOCUST = $(BIN)/python -m locust --headless -H $(LOCUST_HOST) $(if $(ARM),--arm $(ARM)) $(LOCUST_ARGS)
loadtest: $(VENV)/.dev
	mkdir -p $(RESULTS)
	$(LOCUST) -f bench/served/locustfile.py $(USER_CLASSES) -u $(USERS) -r $(SPAWN_RATE) -t $(DURATION) \
		--csv $(RESULTS)/run --html $(RESULTS)/run.html || status=$$?; \
	$(BIN)/python -m bench.served.report $(RESULTS)/run --out $(RESULTS)/run-report; exit $${status:-0}

## The step load (bench/served/shapes.py): more users each step until p99 passes SLA_MS.
SLA_MS ?= 300
STEP_TIME ?= 60
loadtest-steps: $(VENV)/.dev
	mkdir -p $(RESULTS)
	$(LOCUST) -f bench/served/locustfile.py,bench/served/shapes.py $(or $(USER_CLASSES),EditorUser) --sla-p99-ms $(SLA_MS) \
		--step-time $(STEP_TIME) --csv $(RESULTS)/steps --html $(RESULTS)/steps.html || status=$$?; \
	$(BIN)/python -m bench.served.report $(RESULTS)/steps --out $(RESULTS)/steps-report; exit $${status:-0}

## docs/benchmarks/locust.{json,md} and locust-*.png: starts its own server, about 25 minutes.
loadtest-measure: $(VENV)/.dev
	$(BIN)/python -m bench.served.measure --spawn $(MODEL) --out $(BENCH)/locust --sla-p99-ms $(SLA_MS) \
		--step-time $(STEP_TIME) --compare-time 120

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis

## Regenerate the committed gRPC code from service/api/grpc/proto/gecserve.proto.
proto: $(VENV)/.dev
	$(BIN)/python -m grpc_tools.protoc -I service/api/grpc/proto --python_out=service/api/grpc/proto \
		--pyi_out=service/api/grpc/proto --grpc_python_out=service/api/grpc/proto service/api/grpc/proto/gecserve.proto
	sed -i 's/^import gecserve_pb2 as/from service.api.grpc.proto import gecserve_pb2 as/' service/api/grpc/proto/gecserve_pb2_grpc.py
