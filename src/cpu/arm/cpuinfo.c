/* aarch64 feature detection for the NEON kernels: Advanced SIMD is architectural on aarch64,
 * so NEON is always there; the dot-product instructions (SDOT) are asked of the OS: the
 * HWCAP_ASIMDDP bit of getauxval(AT_HWCAP) on Linux and Android, the
 * hw.optional.arm.FEAT_DotProd sysctl on Apple. Called once through ti__cpu_isa_best
 * (cpu/isa.c). Compiled only when TI__ARM_NEON is defined (core/config.h). */
#ifdef TI__ARM_NEON
#if defined(TI__ARM_DOTPROD) && defined(__linux__)
#include <sys/auxv.h>
#elif defined(TI__ARM_DOTPROD) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif

TI__PRIVATE int ti__arm_detect(void) {
#if defined(TI__ARM_DOTPROD) && defined(__linux__)
    /* the kernel's HWCAP_ASIMDDP (arch/arm64/include/uapi/asm/hwcap.h), spelt out so that
     * no kernel header is needed */
    if (getauxval(AT_HWCAP) & (1UL << 20)) return TI__ISA_NEONDOT;
#elif defined(TI__ARM_DOTPROD) && defined(__APPLE__)
    int v = 0;
    size_t len = sizeof v;
    if (sysctlbyname("hw.optional.arm.FEAT_DotProd", &v, &len, NULL, 0) == 0 && v != 0)
        return TI__ISA_NEONDOT;
#endif
    return TI__ISA_NEON;
}
#endif /* TI__ARM_NEON */
