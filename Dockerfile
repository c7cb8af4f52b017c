# gecserve images. Targets:
#   cpu  docker build --target cpu -t gecserve:cpu .
#   gpu  docker build --target gpu -t gecserve:gpu .    (NVIDIA hosts; run with --gpus all)
# `gecserve serve` by default; `docker run IMAGE worker --redis URL` runs an engine worker.
# BASE and CUDA_BASE choose the base images (a local one where no registry is reachable: see
# deploy/README.md and `make docker-test`); PIP_INDEX_URL the package index.
ARG BASE=python:3.11.13-slim-bookworm
ARG CUDA_BASE=nvidia/cuda:13.0.1-cudnn-runtime-ubuntu24.04

# -- cpu ---------------------------------------------------------------------------------------
FROM ${BASE} AS cpu-build
ARG PIP_INDEX_URL=https://pypi.org/simple
ENV PIP_INDEX_URL=${PIP_INDEX_URL} PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY service service
COPY models models
RUN python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-compile . \
    && /opt/venv/bin/python -m compileall -q /opt/venv/lib

FROM ${BASE} AS cpu
# tini as PID 1 forwards SIGTERM to gecserve, which drains, and reaps zombies.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
COPY --from=cpu-build /opt/venv /opt/venv
WORKDIR /app
COPY models/gec-default models/gec-default
COPY models/gec-v2 models/gec-v2
COPY deploy/experiments deploy/experiments
# A numeric non-root user (no passwd entry needed; Kubernetes' runAsNonRoot can check it). Nothing
# is written outside /tmp: the root filesystem may be mounted read-only.
ENV PATH=/opt/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp \
    GECSERVE_MODEL_PATH=/app/models/gec-default
USER 10001:10001
EXPOSE 8000 50051
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('GECSERVE_HTTP_PORT', '8000'), timeout=2)"]
ENTRYPOINT ["tini", "--", "gecserve"]
CMD ["serve"]

# -- gpu ---------------------------------------------------------------------------------------
# CUDA 13 with cuDNN 9: what onnxruntime-gpu 1.31 is built against. Ubuntu 24.04's Python 3.12.
FROM ${CUDA_BASE} AS gpu-base
# Ubuntu's own versions of these, fixed by the pinned CUDA_BASE's release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates tini \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*

FROM gpu-base AS gpu-build
ARG PIP_INDEX_URL=https://pypi.org/simple
ENV PIP_INDEX_URL=${PIP_INDEX_URL} PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY service service
COPY models models
# onnxruntime and onnxruntime-gpu install the same module: keep only the GPU build.
RUN python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-compile ".[gpu]" \
    && /opt/venv/bin/pip uninstall -y onnxruntime onnxruntime-gpu \
    && /opt/venv/bin/pip install --no-compile --no-deps onnxruntime-gpu==1.31.1 \
    && /opt/venv/bin/python -m compileall -q /opt/venv/lib

# The shipped graphs are static int8 (QDQ), which CUDA runs dequantised: a GPU gets the fp32
# graphs, exported from the same weights (models.gec.unpack, then `gecserve export`, verified
# against PyTorch), with the shipped folder's spelling stage, language model and keep-bias levels
# (models.gec.carry). torch and transformers stay in this stage.
FROM cpu-build AS gpu-model
RUN /opt/venv/bin/pip install --no-compile "/src[build]" \
    && /opt/venv/bin/python -m models.gec.unpack --model /src/models/gec-default --out /tmp/gec-default-hf \
    && /opt/venv/bin/gecserve export --from /tmp/gec-default-hf --out /out/gec-default-fp32 \
        --name gec-default --version 5 \
    && /opt/venv/bin/python -m models.gec.carry --from /src/models/gec-default --to /out/gec-default-fp32

FROM gpu-base AS gpu
COPY --from=gpu-build /opt/venv /opt/venv
WORKDIR /app
COPY --from=gpu-model /out/gec-default-fp32 models/gec-default-fp32
COPY models/gec-v2 models/gec-v2
COPY deploy/experiments deploy/experiments
ENV PATH=/opt/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp \
    GECSERVE_MODEL_PATH=/app/models/gec-default-fp32 GECSERVE_PROVIDER=cuda
USER 10001:10001
EXPOSE 8000 50051
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('GECSERVE_HTTP_PORT', '8000'), timeout=2)"]
ENTRYPOINT ["tini", "--", "gecserve"]
CMD ["serve"]
