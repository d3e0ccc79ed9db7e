#!/usr/bin/env bash
# Cross-checks tinyinfer_cl.h against Khronos' OpenCL headers (Debian opencl-headers):
# every constant it defines has Khronos' value, every type has Khronos' size, and every
# entry of its function table has the signature of Khronos' prototype (assigning the
# real function to a pointer of the table's type must compile with -Werror, in C and C++).
# Usage: tests/cl/check_cl_header.sh WORKDIR. Prints "N passed, N failed[, N skipped]".
set -u
cd "$(dirname "$0")/../.."
W=${1:-/tmp/ti_clcheck}
mkdir -p "$W"
if [ ! -f /usr/include/CL/cl.h ]; then
    echo "SKIP: Khronos headers not installed (Debian package opencl-headers)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

consts=$(grep -oE '^#define (CL_[A-Z0-9_]+)' src/cl/cl_api.h | awk '{print $2}' | sort -u)
types=$(grep -oE '^typedef [^;]*\b(cl_[a-z_]+);' src/cl/cl_api.h | grep -oE 'cl_[a-z_]+;$' | tr -d ';' | sort -u)
gen() { # gen FILE PRELUDE: a program printing each constant's value and each type's size
    {
        printf '%s\n#include <stdio.h>\nint main(void) {\n' "$2"
        for c in $consts; do printf '    printf("%s %%lld\\n", (long long)(%s));\n' "$c" "$c"; done
        for t in $types; do printf '    printf("sizeof(%s) %%d\\n", (int)sizeof(%s));\n' "$t" "$t"; done
        printf '    return 0;\n}\n'
    } > "$1"
}
gen "$W/ours.c" '#include "tinyinfer_cl.h"'
gen "$W/khronos.c" '#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>'
if cc -std=c99 -I. "$W/ours.c" -o "$W/ours" && cc -std=c99 "$W/khronos.c" -o "$W/khronos"; then
    "$W/ours" > "$W/ours.txt"; "$W/khronos" > "$W/khronos.txt"
    while read -r name value; do
        want=$(grep -m1 "^$name " "$W/khronos.txt" | cut -d' ' -f2)
        if [ "$value" = "$want" ]; then ok; else bad "$name is $value, Khronos says $want"; fi
    done < "$W/ours.txt"
else
    bad "the constant/type programs did not compile"
fi

# Signatures: with Khronos' header first, tinyinfer_cl.h reuses its types; each table
# entry's pointer type must accept the real function.
{
    printf '#define CL_TARGET_OPENCL_VERSION 300\n#define CL_USE_DEPRECATED_OPENCL_1_2_APIS\n'
    printf '#include <CL/cl.h>\n#include "tinyinfer_cl.h"\n'
    printf '#define CHECK(req, ret, name, args) { ret (TI_CL_CALL *p) args = &name; (void)p; }\n'
    printf 'void ti_check_signatures(void);\nvoid ti_check_signatures(void) { TI_CL_FUNCS(CHECK) }\n'
    printf 'int main(void) { ti_check_signatures(); return 0; }\n'
} > "$W/sig.c"
n_funcs=$(grep -cE '^ *X\([01], ' src/cl/cl_api.h)
if cc -std=c99 -Wall -Wextra -Werror -I. -c "$W/sig.c" -o "$W/sig.o" 2> "$W/sig_c.log"; then ok; else bad "C signatures differ: $(head -5 "$W/sig_c.log")"; fi
if c++ -Wall -Wextra -Werror -I. -x c++ -c "$W/sig.c" -o "$W/sig_cpp.o" 2> "$W/sig_cpp.log"; then ok; else bad "C++ signatures differ: $(head -5 "$W/sig_cpp.log")"; fi
echo "checked $(echo "$consts" | wc -w) constants, $(echo "$types" | wc -w) types, $n_funcs functions against Khronos' headers"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
