/* Process-wide synchronisation for the library's only two mutable globals: the detected
 * instruction set (cpu/isa.c) and the OpenCL context table (cl/runtime.c). Sessions on
 * several threads reach both at the same time, so they must be race-free everywhere a
 * user can start threads, not only where tinyinfer's own pool runs (TI_NO_THREADS still
 * lets the application use threads). Provides an int with acquire/release
 * loads and stores, compare-and-swap and add (GCC/Clang __atomic builtins, MSVC
 * Interlocked intrinsics; the thread pool's lock-free chunks use them too), one global
 * lock, and the threads, mutexes and condition variables the library starts and waits
 * on. Relies on pthreads or on Windows' kernel32 and C runtime. Must not allocate or
 * print. */

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

/* Threads, mutexes and condition variables for the thread pool (core/threadpool.c) and
 * the OpenCL background build (cl/backend.c): pthreads, or on Windows the kernel's own
 * (threads by the C runtime's _beginthreadex, slim reader/writer locks, condition
 * variables: Vista and later). The Windows functions are declared here with
 * <windows.h>'s exact types instead of including it, so that it may come before or after
 * (cl/loader.c and the timer in core/threadpool.c do the same). A mutex or condition
 * variable must be set up by ti__mutex_init / ti__cond_init and ended by _destroy; a
 * thread runs a TI__THREAD_FN and is joined once. */
#if defined(_WIN32) /* the global lock's, below, also with TI_NO_THREADS */
struct _RTL_SRWLOCK;
TI__EXTERN_C __declspec(dllimport) void __stdcall AcquireSRWLockExclusive(struct _RTL_SRWLOCK *);
TI__EXTERN_C __declspec(dllimport) void __stdcall ReleaseSRWLockExclusive(struct _RTL_SRWLOCK *);
#endif
#if !defined(TI_NO_THREADS) && defined(_WIN32)
#include <process.h> /* _beginthreadex */
struct _RTL_CONDITION_VARIABLE;
TI__EXTERN_C __declspec(dllimport) int __stdcall SleepConditionVariableSRW(
    struct _RTL_CONDITION_VARIABLE *, struct _RTL_SRWLOCK *, unsigned long, unsigned long);
TI__EXTERN_C __declspec(dllimport) void __stdcall WakeConditionVariable(
    struct _RTL_CONDITION_VARIABLE *);
TI__EXTERN_C __declspec(dllimport) void __stdcall WakeAllConditionVariable(
    struct _RTL_CONDITION_VARIABLE *);
TI__EXTERN_C __declspec(dllimport) unsigned long __stdcall WaitForSingleObject(void *,
                                                                               unsigned long);
TI__EXTERN_C __declspec(dllimport) int __stdcall CloseHandle(void *);
/* SRWLOCK and CONDITION_VARIABLE are one pointer each, all zero when unlocked and idle */
typedef struct ti__mutex {
    void *p;
} ti__mutex;
typedef struct ti__cond {
    void *p;
} ti__cond;
typedef void *ti__thread; /* the thread's HANDLE */
#define TI__THREAD_FN(name) unsigned __stdcall name(void *arg)
#define TI__THREAD_RETURN 0
typedef unsigned(__stdcall *ti__thread_fn)(void *);
#define TI__SRW(m) ((struct _RTL_SRWLOCK *)(void *)(m))
#define TI__CV(c) ((struct _RTL_CONDITION_VARIABLE *)(void *)(c))
TI__PRIVATE void ti__mutex_init(ti__mutex *m) { m->p = NULL; }
TI__PRIVATE void ti__mutex_destroy(ti__mutex *m) { (void)m; }
TI__PRIVATE void ti__mutex_lock(ti__mutex *m) { AcquireSRWLockExclusive(TI__SRW(m)); }
TI__PRIVATE void ti__mutex_unlock(ti__mutex *m) { ReleaseSRWLockExclusive(TI__SRW(m)); }
TI__PRIVATE void ti__cond_init(ti__cond *c) { c->p = NULL; }
TI__PRIVATE void ti__cond_destroy(ti__cond *c) { (void)c; }
TI__PRIVATE void ti__cond_wait(ti__cond *c, ti__mutex *m) {
    (void)SleepConditionVariableSRW(TI__CV(c), TI__SRW(m), 0xffffffffUL /* INFINITE */, 0);
}
TI__PRIVATE void ti__cond_signal(ti__cond *c) { WakeConditionVariable(TI__CV(c)); }
TI__PRIVATE void ti__cond_broadcast(ti__cond *c) { WakeAllConditionVariable(TI__CV(c)); }
/* Starts fn(arg) on a thread with at least stack bytes of stack (0: the default, the
 * executable's, 1 MiB unless it was linked otherwise); returns 0 when it runs. */
TI__PRIVATE int ti__thread_start(ti__thread *t, ti__thread_fn fn, void *arg, size_t stack) {
    /* the size given is the stack's reservation (STACK_SIZE_PARAM_IS_A_RESERVATION):
     * address space, committed as the stack grows, not memory committed up front */
    uintptr_t h = _beginthreadex(NULL, (unsigned)stack, fn, arg, stack ? 0x10000u : 0u, NULL);
    *t = (void *)h;
    return h != 0 ? 0 : -1;
}
TI__PRIVATE void ti__thread_join(ti__thread t) {
    (void)WaitForSingleObject(t, 0xffffffffUL);
    (void)CloseHandle(t);
}
#elif !defined(TI_NO_THREADS)
#include <pthread.h>
typedef pthread_mutex_t ti__mutex;
typedef pthread_cond_t ti__cond;
typedef pthread_t ti__thread;
#define TI__THREAD_FN(name) void *name(void *arg)
#define TI__THREAD_RETURN NULL
typedef void *(*ti__thread_fn)(void *);
TI__PRIVATE void ti__mutex_init(ti__mutex *m) { pthread_mutex_init(m, NULL); }
TI__PRIVATE void ti__mutex_destroy(ti__mutex *m) { pthread_mutex_destroy(m); }
TI__PRIVATE void ti__mutex_lock(ti__mutex *m) { pthread_mutex_lock(m); }
TI__PRIVATE void ti__mutex_unlock(ti__mutex *m) { pthread_mutex_unlock(m); }
TI__PRIVATE void ti__cond_init(ti__cond *c) { pthread_cond_init(c, NULL); }
TI__PRIVATE void ti__cond_destroy(ti__cond *c) { pthread_cond_destroy(c); }
TI__PRIVATE void ti__cond_wait(ti__cond *c, ti__mutex *m) { pthread_cond_wait(c, m); }
TI__PRIVATE void ti__cond_signal(ti__cond *c) { pthread_cond_signal(c); }
TI__PRIVATE void ti__cond_broadcast(ti__cond *c) { pthread_cond_broadcast(c); }
/* Starts fn(arg) on a thread with at least stack bytes of stack (0: the default, glibc's
 * `ulimit -s`, musl's 128 KiB); returns 0 when it runs. Where the attribute cannot be
 * set, the default. */
TI__PRIVATE int ti__thread_start(ti__thread *t, ti__thread_fn fn, void *arg, size_t stack) {
    pthread_attr_t attr, *pa = NULL;
    if (stack > 0 && pthread_attr_init(&attr) == 0) {
        size_t have = 0;
        pa = &attr;
        if (pthread_attr_getstacksize(&attr, &have) == 0 && have < stack)
            (void)pthread_attr_setstacksize(&attr, stack);
    }
    int rc = pthread_create(t, pa, fn, arg);
    if (pa != NULL) pthread_attr_destroy(pa);
    return rc == 0 ? 0 : -1;
}
TI__PRIVATE void ti__thread_join(ti__thread t) { pthread_join(t, NULL); }
#endif

/* The global lock. Held only around short, rare work (creating the first OpenCL context
 * of a device, about 100 ms on one driver, once per process). On Windows a slim
 * reader/writer lock (all zero: unlocked) also with TI_NO_THREADS: the application's
 * threads may still meet here. */
#if defined(_WIN32)
static void *ti__global_srw;
TI__PRIVATE void ti__global_lock(void) {
    AcquireSRWLockExclusive((struct _RTL_SRWLOCK *)(void *)&ti__global_srw);
}
TI__PRIVATE void ti__global_unlock(void) {
    ReleaseSRWLockExclusive((struct _RTL_SRWLOCK *)(void *)&ti__global_srw);
}
#elif !defined(TI_NO_THREADS)
static pthread_mutex_t ti__global_mu = PTHREAD_MUTEX_INITIALIZER;
TI__PRIVATE void ti__global_lock(void) { pthread_mutex_lock(&ti__global_mu); }
TI__PRIVATE void ti__global_unlock(void) { pthread_mutex_unlock(&ti__global_mu); }
#else
static ti__atomic_int ti__global_spin; /* 0 free, 1 held */
TI__PRIVATE void ti__global_lock(void) {
    while (!ti__atomic_cas(&ti__global_spin, 0, 1)) {
    }
}
TI__PRIVATE void ti__global_unlock(void) { ti__atomic_store(&ti__global_spin, 0); }
#endif
