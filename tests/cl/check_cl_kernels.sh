#!/usr/bin/env bash
# Compiles every OpenCL program of cl/kernels.c with clang's OpenCL C front end (to SPIR,
# no device needed) in its three variants: fp32, fp16 storage (-DTI_F16) and fp16 with
# half arithmetic (-DTI_F16_ARITH, cl_khr_fp16 declared). PoCL and the H100's NVIDIA
# driver have no cl_khr_fp16, so there the third variant is built only here; Intel's CPU
# OpenCL (build.sh's j_cl_intel) builds and runs it. It also checks that the arithmetic
# variant is refused without the extension (the build options select it only where the
# device has it).
# Usage: tests/cl/check_cl_kernels.sh WORKDIR. Prints "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/../.."
W=${1:-/tmp/ti_clkernels}
mkdir -p "$W"
if ! command -v clang >/dev/null || ! echo 'kernel void k(void) {}' |
    clang -x cl -cl-std=CL1.2 -target spir64 -c -emit-llvm -o /dev/null - 2>/dev/null; then
    echo "SKIP: no clang with OpenCL C and the spir64 target"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
cat >"$W/dump.c" <<'C'
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include <stdio.h>
int main(int argc, char **argv) { /* the source of program argv[1], as ti__clrt_build gives it */
    if (argc < 2) return 2;
    for (const char *const *c = ti__cl_src_common; *c; c++) fputs(*c, stdout);
    for (const char *const *c = ti__cl_prog_src((ti__clp)atoi(argv[1])); *c; c++) fputs(*c, stdout);
    return 0;
}
C
cc -I. "$W/dump.c" -o "$W/dump" -lm -pthread -ldl || { echo "FAIL: dump.c"; echo "0 passed, 1 failed"; exit 1; }
ocl=(clang -x cl -cl-std=CL1.2 -target spir64 -c -emit-llvm -O1 -Xclang -finclude-default-header -DTI_T=16)
for p in 0 1 2 3 4; do
    "$W/dump" "$p" >"$W/prog$p.cl"
    for opts in "" "-DTI_F16" "-DTI_F16 -DTI_F16_ARITH"; do
        # shellcheck disable=SC2086
        if "${ocl[@]}" -Xclang -cl-ext=+cl_khr_fp16 $opts "$W/prog$p.cl" -o "$W/prog$p.bc" 2>"$W/log"; then ok
        else bad "program $p [$opts]:"; head -n 5 "$W/log"; fi
    done
    case $p in 0 | 4) continue ;; esac # the elementwise and 8-bit programs have no half arithmetic
    if "${ocl[@]}" -Xclang -cl-ext=-cl_khr_fp16 -DTI_F16 -DTI_F16_ARITH "$W/prog$p.cl" -o "$W/x.bc" 2>/dev/null; then
        bad "program $p: its half arithmetic built without cl_khr_fp16"
    else ok; fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
