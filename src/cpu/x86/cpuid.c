/* x86 feature detection for the SIMD kernels: cpuid says what the CPU has, XGETBV says
 * whether the OS saves the YMM (AVX) and opmask/ZMM (AVX-512) registers on context switches;
 * both must agree before a kernel may use them. Called once through ti__cpu_isa_best
 * (cpu/isa.c). Compiled only when TI__X86_SIMD is defined (core/config.h). */
#ifdef TI__X86_SIMD
#include <cpuid.h>

/* XCR0 through the raw opcode of XGETBV, so no -mxsave is needed. Only valid when cpuid
 * reports OSXSAVE. */
TI__PRIVATE unsigned long long ti__x86_xcr0(void) {
    unsigned lo, hi;
    __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

TI__PRIVATE int ti__x86_detect(void) {
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 7) return TI__ISA_SCALAR;
    __cpuid(1, a, b, c, d);
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx || !fma) return TI__ISA_SCALAR;
    unsigned long long xcr0 = ti__x86_xcr0();
    if ((xcr0 & 0x6) != 0x6) return TI__ISA_SCALAR; /* XMM and YMM state */
    __cpuid_count(7, 0, a, b, c, d);
    int avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1;
    int avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1, vnni = (c >> 11) & 1;
    int avx512dq = (b >> 17) & 1;
    if (!avx2) return TI__ISA_SCALAR;
    /* opmask, upper halves of ZMM0-15, ZMM16-31 */
    if (avx512f && (xcr0 & 0xe0) == 0xe0) {
#ifdef TI__X86_VNNI
        if (avx512bw && avx512dq && avx512vl && vnni) {
#ifdef TI__X86_AMX
            if (ti__x86_amx(d)) return TI__ISA_AMX;
#endif
            return TI__ISA_AVX512VNNI;
        }
#else
        (void)avx512bw, (void)avx512dq, (void)avx512vl, (void)vnni;
#endif
        return TI__ISA_AVX512;
    }
    return TI__ISA_AVX2;
}

#ifdef TI__X86_AMX
/* Whether this process may use AMX-TILE and AMX-INT8 (leaf7_edx: cpuid leaf 7's EDX, bits 24
 * and 25): the
 * OS must save the tile state (XCR0 bits 17 and 18), and Linux (5.16 and later) hands the
 * tile data to a process only once it asks, with arch_prctl(ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA); without that, the first tile instruction faults. The request is made
 * here, once, by a raw system call (158 is arch_prctl on x86-64: glibc declares syscall()
 * only for _DEFAULT_SOURCE, which a user's -std=c99 build leaves off). It covers every
 * thread of the process, those started later included. Kernels that lack the request
 * answer with an error: no AMX then. The grant enlarges the process's signal frames (by the
 * 8 KiB of tile data), so Linux then refuses alternate signal stacks too small for them: a
 * process that wants none of that sets TINYINFER_ISA to a lower level (the request is not
 * made then) or builds with TI_NO_AMX. */
TI__PRIVATE int ti__x86_amx(unsigned leaf7_edx) {
    int cap = ti__isa_from_env(); /* -1: unset or unknown */
    if (cap >= 0 && cap < TI__ISA_AMX) return 0;
    if (((leaf7_edx >> 24) & 3) != 3) return 0;
    if ((ti__x86_xcr0() & 0x60000) != 0x60000) return 0;
    long ret;
    __asm__ __volatile__("syscall"
                         : "=a"(ret)
                         : "0"(158L), "D"(0x1023L), "S"(18L)
                         : "rcx", "r11", "memory");
    return ret == 0;
}
#endif

/* Whether the CPU has AVX512-VBMI (cpuid leaf 7, ECX bit 1) besides the AVX512VNNI level;
 * the caller checks that level (and so the OS's ZMM state) first. */
TI__PRIVATE int ti__x86_vbmi(void) {
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    (void)a, (void)b, (void)d;
    return (int)((c >> 1) & 1);
}
#endif /* TI__X86_SIMD */
