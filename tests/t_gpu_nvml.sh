#!/usr/bin/env bash
# t_gpu_nvml: the shim's NVML path on a real NVIDIA GPU (the other counter tests use the fake,
# tests/fixtures/fake_nvml.c). `perfscope record` runs tests/targets/gpu_engine (CUDA driver API
# through dlopen: no CUDA toolkit needed), which allocates memory in itself and in a child and
# keeps the GPU busy, while a process outside the run holds memory too; tests/gpu_nvml_check.py
# holds the shim's readings at each boundary against nvidia-smi and the engine's own NVML reads.
# Skips on a machine without an NVIDIA driver, where this path cannot run.
set -u
. "$ROOT/tests/lib.sh"
need_shim
need_tool perfscope
[ -e /dev/nvidiactl ] || skip "no NVIDIA GPU here (/dev/nvidiactl missing); NVML is tested with tests/fixtures/fake_nvml.c"
command -v nvidia-smi >/dev/null || skip "nvidia-smi missing: nothing outside the shim to check NVML against"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi finds no GPU: $(nvidia-smi -L 2>&1 | head -1)"
build_target gpu_engine
E=$TBUILD/gpu_engine
export CUDA_DEVICE_ORDER=PCI_BUS_ID    # CUDA's device 0 is NVML's and nvidia-smi's
SIDE_MIB=768 MIB=2048 CHILD_MIB=512

# A GPU process outside the run, for the whole of it.
coproc SIDE { exec "$E" hold $SIDE_MIB; }
read -r ready side_pid <&"${SIDE[0]}" || fail "the outside process did not get its GPU memory"
[ "$ready" = ready ] || fail "the outside process said: $ready $side_pid"

"$TOOL" record -o out -- "$E" run $MIB $CHILD_MIB 4 >engine.jsonl 2>record.err
rc=$?
side_in=${SIDE[1]}
exec {side_in}>&-
wait "$SIDE_PID" || bad "the outside process failed"
sed 's/^/# record: /' record.err
check "perfscope record exits as the engine did (0, got $rc)" [ "$rc" -eq 0 ]
py_check nvml "$ROOT/tests/gpu_nvml_check.py" out engine.jsonl "$side_pid" $SIDE_MIB $MIB $CHILD_MIB
checks_done
