#!/usr/bin/env bash
# Intel's CPU OpenCL runtime, from PyPI (intel-opencl-rt with its libraries from
# intel-cmplr-lib-rt and tbb): a second OpenCL implementation beside Debian's PoCL, and the
# only one reachable here that reports cl_khr_fp16 (PoCL 3.1 and 5.0 and the H100's driver do
# not), so tinyinfer's half-arithmetic kernels (-DTI_F16_ARITH) run somewhere. It runs on
# x86-64 CPUs of either vendor. The wheels are fetched once into DIR and unpacked there,
# not installed: nothing else on the machine sees this OpenCL.
# Usage: tests/cl/intel_ocl.sh DIR    (.ci/run calls it with $TINYINFER_CACHE/intel-ocl)
# Then: LD_LIBRARY_PATH=$(cat DIR/libpath) OCL_ICD_FILENAMES=$(cat DIR/icd) selects it.
set -euo pipefail
dir=$1
[ -f "$dir/icd" ] && exit 0
py=${PYTHON:-python3}
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/wheels"
"$py" -m pip download -q --no-deps -d "$tmp/wheels" "intel-opencl-rt==2026.2.0" \
    "intel-cmplr-lib-rt==2026.2.0" "tbb==2023.2.0"
libs=()
for w in "$tmp"/wheels/*.whl; do
    "$py" -m zipfile -e "$w" "$tmp/x"
done
rm -rf "$tmp/wheels"
for d in "$tmp"/x/*.data/data/lib; do libs+=("$dir/${d#"$tmp/"}"); done
icd=$(cd "$tmp" && ls x/*.data/data/lib/libintelocl.so)
(IFS=:; echo "${libs[*]}") >"$tmp/libpath"
echo "$dir/$icd" >"$tmp/icd"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "Intel CPU OpenCL unpacked in $dir"
