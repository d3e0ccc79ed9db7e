#!/usr/bin/env bash
# The SIMD kernel tests on this x86-64 host, every ISA level it has forced in turn against
# the scalar reference (the tests do the forcing), and the level detection (test_isa).
# For hosts with more than CI's machine: CI's may lack AVX-512 (then the AVX-512 and VNNI
# cases are skipped there, and say so); run this where the CPU has them, e.g. through the
# device tool on the GPU host. Usage: tests/ports/x86_kernels.sh [WANT], WANT being the ISA
# the host must report (avx2, avx512, avx512vnni, amx); prints "N passed, N failed[, N skipped]".
set -uo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-gcc}
out=${TMPDIR:-/tmp}/tinyinfer-x86-kernels
mkdir -p "$out"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2-)"
p=0 f=0 s=0
for t in tests/unit/test_sgemm.c tests/unit/test_conv.c tests/unit/test_act.c \
    tests/unit/test_binary.c tests/unit/test_pool.c tests/unit/test_qgemm.c tests/ports/test_isa.c; do
    n=$(basename "${t%.c}")
    if ! "$CC" -O2 -std=c99 -pedantic -Wall -Wextra -I. -Itests/harness "$t" -o "$out/$n" -lm -pthread; then
        echo "FAIL $n: does not compile"
        f=$((f + 1))
        continue
    fi
    env ${1:+TI_TEST_WANT_ISA=$1} timeout 600 "$out/$n" >"$out/$n.log" 2>&1
    rc=$?
    line=$(grep -aEo '[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?' "$out/$n.log" | tail -n 1)
    echo "$n (exit $rc): $(grep -a -m1 'best ISA' "$out/$n.log") ${line:-no summary}"
    grep -aE '^(FAIL|SKIP)' "$out/$n.log" | head -n 5
    read -r tp _ tf _ ts _ <<<"${line:-0 passed, 1 failed, 0 skipped}"
    [ "$rc" = 0 ] || [ "${tf:-0}" != 0 ] || tf=1
    p=$((p + tp)) f=$((f + tf)) s=$((s + ${ts:-0}))
done
echo "$p passed, $f failed, $s skipped"
[ "$f" = 0 ]
