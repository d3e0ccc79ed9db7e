/* Configuration macros and their defaults, in one place (see the table at the top of
 * tinyinfer.h). Relies on nothing but the C library headers. Must not define anything
 * a user could see outside the TI_/TI__ prefixes. */
#if defined(TI_MALLOC) && !defined(TI_FREE) || !defined(TI_MALLOC) && defined(TI_FREE)
#error "tinyinfer: define both TI_MALLOC and TI_FREE, or neither"
#endif
#ifndef TI_MALLOC
#define TI_MALLOC(sz) malloc(sz)
#define TI_FREE(p) free(p)
#else
#define TI__USER_MALLOC 1 /* no huge-page advice on its blocks (core/alloc.c) */
#endif
#ifndef TI_ASSERT
#include <assert.h>
#define TI_ASSERT(x) assert(x)
#endif
/* Largest single tensor (bytes) a file may declare, unless the desc says otherwise. */
#ifndef TI_MAX_TENSOR_BYTES
#define TI_MAX_TENSOR_BYTES ((uint64_t)2 << 30)
#endif
#ifndef TI_MAX_TOTAL_BYTES
#define TI_MAX_TOTAL_BYTES ((uint64_t)8 << 30)
#endif
#ifndef TI_MAX_NODES
#define TI_MAX_NODES 1000000
#endif
/* Nesting depth for recursive structures (protobuf messages, flatbuffer tables). */
#ifndef TI_MAX_DEPTH
#define TI_MAX_DEPTH 32
#endif
#ifndef TI_MAX_THREADS
#define TI_MAX_THREADS 64
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TI__PRIVATE static __attribute__((unused))
#else
#define TI__PRIVATE static
#endif
/* the format checks of our printf-like helpers: MinGW's "printf" means msvcrt's, which
 * lacks %zu; the library's formats are C99's */
#if defined(__MINGW32__)
#define TI__PRINTF_FORMAT gnu_printf
#else
#define TI__PRINTF_FORMAT printf
#endif

/* C linkage for the system functions the implementation declares itself (Windows'), so
 * that a C++ translation unit links them and agrees with <windows.h> */
#ifdef __cplusplus
#define TI__EXTERN_C extern "C"
#else
#define TI__EXTERN_C
#endif

/* x86 SIMD kernels (src/cpu/x86/): AVX2+FMA and AVX-512F micro-kernels compiled with
 * function-level target attributes, so the library needs no -mavx flags and picks the ISA at
 * run time (cpuid + XGETBV). Only GCC >= 4.9 and Clang know those attributes and declare every
 * intrinsic regardless of -m flags; other compilers, other CPUs and TI_NO_SIMD get the
 * portable scalar kernels. */
#if !defined(TI_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) &&                  \
    (defined(__clang__) || (defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 &&          \
                                                                    __GNUC_MINOR__ >= 9))))
#define TI__X86_SIMD 1
#define TI__TARGET_AVX2 __attribute__((target("avx2,fma")))
#define TI__TARGET_AVX512 __attribute__((target("avx512f,avx2,fma")))
#define TI__X86_INLINE static __inline__ __attribute__((always_inline, unused))
/* Unrolls the next loop (up to 5, 8 or 16 trips) where the compiler knows the request: GCC >= 8
 * and Clang; older GCC would warn about an unknown pragma. */
#if defined(__clang__) || __GNUC__ >= 8
#define TI__UNROLL5 _Pragma("GCC unroll 5")
#define TI__UNROLL8 _Pragma("GCC unroll 8")
#define TI__UNROLL16 _Pragma("GCC unroll 16")
#else
#define TI__UNROLL5
#define TI__UNROLL8
#define TI__UNROLL16
#endif
/* AVX512-VNNI (VPDPBUSD, the 8-bit GEMM of cpu/x86/qgemm_vnni.c) needs GCC >= 8 or Clang
 * >= 6 to know the target name; older compilers build without that kernel. Its level also
 * takes AVX512-DQ (VREDUCEPS in the requantization), which every CPU with VNNI has. */
#if defined(__clang__) ? (__clang_major__ >= 6) : (__GNUC__ >= 8)
#define TI__X86_VNNI 1
#define TI__TARGET_AVX512VNNI                                                                \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma")))
/* ... plus AVX512-VBMI (VPERMI2B: the 8-bit ADD's byte-plane lookups), detected apart: the
 * Xeons before Ice Lake have VNNI without it */
#define TI__TARGET_AVX512VBMI                                                                \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx512vbmi,avx2,fma")))
/* AMX (Intel's tile registers: TDPBUSD / TDPBSSD, the 8-bit GEMM of cpu/x86/qgemm_vnni_amx.c)
 * on 64-bit Linux with GCC >= 11 or Clang >= 12: Linux hands a process the tile state only
 * after it asks (arch_prctl, cpu/x86/cpuid.c), with the x86-64 system call number used there;
 * other systems and compilers, and TI_NO_AMX, build without that kernel. So do builds under
 * MemorySanitizer, which does not see the tile stores write memory (it reported the stored
 * sums as uninitialized). */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define TI__MSAN 1
#endif
#endif
#if !defined(TI_NO_AMX) && !defined(TI__MSAN) && defined(__x86_64__) && defined(__linux__) && \
    (defined(__clang__) ? (__clang_major__ >= 12) : (__GNUC__ >= 11))
#define TI__X86_AMX 1
#define TI__TARGET_AMX                                                                       \
    __attribute__((target(                                                                   \
        "amx-tile,amx-int8,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma")))
#endif
#endif
#endif

/* aarch64 NEON kernels (src/cpu/arm/): Advanced SIMD is part of every aarch64 CPU, so the
 * NEON kernels need no detection beyond the architecture. The dot-product instructions
 * (SDOT, Armv8.2 dotprod: the 8-bit GEMM) are optional: detected at run time (getauxval on
 * Linux and Android, sysctl on Apple) and compiled with a function-level target attribute,
 * which needs GCC >= 10 or Clang >= 16 (their arm_neon.h declares the intrinsics whatever
 * the -march). Other compilers and TI_NO_SIMD get the portable scalar kernels. */
#if !defined(TI_NO_SIMD) && defined(__aarch64__) && defined(__ARM_NEON) &&                  \
    (defined(__clang__) || defined(__GNUC__))
#define TI__ARM_NEON 1
#define TI__ARM_INLINE static __inline__ __attribute__((always_inline, unused))
#if (defined(__linux__) || defined(__APPLE__)) &&                                             \
    (defined(__clang__) ? (__clang_major__ >= 16) : (__GNUC__ >= 10))
#define TI__ARM_DOTPROD 1
#if defined(__clang__)
#define TI__TARGET_DOTPROD __attribute__((target("dotprod")))
#else
/* GCC's arm_neon.h (12) declares the dot-product intrinsics under
 * "arch=armv8.2-a+dotprod"; a caller with only "+dotprod" on the default Armv8.0 base
 * fails to inline them ("target specific option mismatch"), so the same arch is named */
#define TI__TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#endif
#endif

/* The byte path of the 8-bit GEMM (core/qgemm.c: A and B as bytes, four depths per 32-bit
 * lane) is compiled in: AVX512-VNNI on x86, SDOT on aarch64. */
#if defined(TI__X86_VNNI) || defined(TI__ARM_DOTPROD)
#define TI__QG8 1
#endif
