/* Process-wide synchronisation for the library's only two mutable globals: the detected
 * instruction set (cpu/isa.c) and the OpenCL context table (cl/runtime.c). Sessions on
 * several threads reach both at the same time, so they must be race-free everywhere a
 * user can start threads, not only where tinyinfer's own pool runs (TI_NO_THREADS and
 * Windows still let the application use threads). Provides an int with acquire/release
 * loads and stores, compare-and-swap and add (GCC/Clang __atomic builtins, MSVC
 * Interlocked intrinsics; the thread pool's lock-free chunks use them too) and one
 * global lock (a pthread mutex with pthreads, else a spin lock on those atomics that
 * yields while it waits). Relies on no header beyond those. Must not allocate or print. */

#if defined(__GNUC__) || defined(__clang__)
#define TI__ATOMIC_GNU 1
#elif defined(_MSC_VER)
#include <intrin.h>
#define TI__ATOMIC_MSVC 1
#endif
/* Other compilers get volatile accesses: correct on single-core targets and on x86, the
 * best C99 offers without C11 <stdatomic.h> (which C++ compilers of this header lack). */

#if defined(TI__ATOMIC_MSVC)
typedef volatile long ti__atomic_int;
#else
typedef volatile int ti__atomic_int;
#endif

TI__PRIVATE int ti__atomic_load(ti__atomic_int *p) { /* acquire */
#if defined(TI__ATOMIC_GNU)
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#elif defined(TI__ATOMIC_MSVC)
    return (int)_InterlockedCompareExchange(p, 0, 0);
#else
    return *p;
#endif
}

TI__PRIVATE void ti__atomic_store(ti__atomic_int *p, int v) { /* release */
#if defined(TI__ATOMIC_GNU)
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#elif defined(TI__ATOMIC_MSVC)
    _InterlockedExchange(p, (long)v);
#else
    *p = v;
#endif
}

/* Sets *p to desired when it holds expected; returns 1 when it did (acquire + release). */
TI__PRIVATE int ti__atomic_cas(ti__atomic_int *p, int expected, int desired) {
#if defined(TI__ATOMIC_GNU)
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
#elif defined(TI__ATOMIC_MSVC)
    return _InterlockedCompareExchange(p, (long)desired, (long)expected) == (long)expected;
#else
    if (*p != expected) return 0;
    *p = desired;
    return 1;
#endif
}

/* Adds v to *p and returns the new value; a full barrier (sequentially consistent). */
TI__PRIVATE int ti__atomic_add(ti__atomic_int *p, int v) {
#if defined(TI__ATOMIC_GNU)
    return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
#elif defined(TI__ATOMIC_MSVC)
    return (int)_InterlockedExchangeAdd(p, (long)v) + v;
#else
    return *p += v;
#endif
}

/* A load and a store that are sequentially consistent with each other and with
 * ti__atomic_add: a store then a load of another variable on one thread, against the
 * same on another, cannot both miss the other's store (the thread pool's sleep and
 * wake-up hand-shakes rely on it; acquire / release alone allow that). */
TI__PRIVATE int ti__atomic_load_sc(ti__atomic_int *p) {
#if defined(TI__ATOMIC_GNU)
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
#elif defined(TI__ATOMIC_MSVC)
    return (int)_InterlockedCompareExchange(p, 0, 0);
#else
    return *p;
#endif
}
TI__PRIVATE void ti__atomic_store_sc(ti__atomic_int *p, int v) {
#if defined(TI__ATOMIC_GNU)
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
#elif defined(TI__ATOMIC_MSVC)
    _InterlockedExchange(p, (long)v);
#else
    *p = v;
#endif
}

/* The global lock. Held only around short, rare work (creating the first OpenCL context
 * of a device, about 100 ms on one driver, once per process). */
#if !defined(TI_NO_THREADS) && !defined(_WIN32)
#include <pthread.h>
static pthread_mutex_t ti__global_mu = PTHREAD_MUTEX_INITIALIZER;
TI__PRIVATE void ti__global_lock(void) { pthread_mutex_lock(&ti__global_mu); }
TI__PRIVATE void ti__global_unlock(void) { pthread_mutex_unlock(&ti__global_mu); }
#else
#if defined(_WIN32)
/* declared here instead of including <windows.h> (as cl/loader.c does) */
__declspec(dllimport) void __stdcall Sleep(unsigned long ms);
#endif
static ti__atomic_int ti__global_spin; /* 0 free, 1 held */
TI__PRIVATE void ti__global_lock(void) {
    while (!ti__atomic_cas(&ti__global_spin, 0, 1)) {
#if defined(_WIN32)
        Sleep(1); /* the holder may be building a context: do not burn the core */
#endif
    }
}
TI__PRIVATE void ti__global_unlock(void) { ti__atomic_store(&ti__global_spin, 0); }
#endif
