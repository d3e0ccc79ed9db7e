/* Allocation: the user's hooks or TI_MALLOC/TI_FREE, 64-byte aligned blocks, growable
 * arrays and the pool that owns a model's many small pieces. Relies on config.h.
 * Must not allocate through anything but the ti_allocator it is given. */

#define TI__ALIGN 64

/* Transparent huge pages (Linux, 64-bit x86 and Arm, the default allocator, unless
 * TI_NO_HUGE_PAGES): blocks of TI__HUGE bytes and more (the activation arena, packed weights,
 * the scratch; not a model file's bytes) start on a TI__HUGE boundary and their whole huge
 * pages are advised MADV_HUGEPAGE while faulting them in is fast (ti__huge_fault), so that
 * where the system's setting is "madvise" (as on the machines of bench/results) a run takes
 * one TLB entry per 2 MiB instead of 512: with the pools' slabs below, MobileNetV2 3.8 %
 * faster at 1 thread, ResNet-18 1.7 % (summed per-node minima,
 * bench/results/ab-2026-12-04-zen4-s46.md). A refused advice (THP off, an old kernel)
 * changes nothing but speed. TI_MALLOC of the user's gets no advice: its blocks may be
 * anybody's pages. */
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__)) &&                   \
    !defined(TI_NO_HUGE_PAGES) && !defined(TI__USER_MALLOC)
#include <sys/mman.h>
#define TI__HUGE ((size_t)2 << 20)
#ifdef MADV_HUGEPAGE
#define TI__MADV_HUGEPAGE MADV_HUGEPAGE
#else
/* <sys/mman.h> declares neither under strict ISO C (-std=c99 without _DEFAULT_SOURCE);
 * 14 is the kernel's value on both architectures (asm-generic/mman-common.h) */
#define TI__MADV_HUGEPAGE 14
#ifdef __cplusplus
extern "C"
#endif
int madvise(void *addr, size_t len, int advice);
#endif
#endif

/* a rounded up to a multiple of align (a power of two) */
TI__PRIVATE uintptr_t ti__align_up(uintptr_t a, size_t align) {
    return (a + align - 1) & ~(uintptr_t)(align - 1);
}

#ifdef TI__HUGE
/* Huge pages only while faulting them in is fast. Some virtual machines hand a guest a fresh
 * 2 MiB page that the host backs 4 KiB at a time (free memory given back to the host, as
 * Firecracker's guests do): on the test VM a fresh huge page took 14-19 ms to fault in, the
 * same 2 MiB in 4 KiB pages 0.7 ms, and ResNet-18's load and session creation took 0.5-1.6 s
 * with the advice against 0.17-0.19 s without (its runs 5-7 % faster with it). So huge pages
 * are advised one at a time, each faulted in at once and timed; the first to take more than
 * ti__huge_slow_ms ends the advice for the process (TLB misses in each run instead of a slow
 * load; ti__huge_advise_filled gives khugepaged the rest later). Bare metal faults a huge
 * page in well under a millisecond. */
TI__PRIVATE double ti__now_ms(void);
static double ti__huge_slow_ms = 2.0;
static ti__atomic_int ti__huge_slow; /* 1 once a huge page was slow to fault in */

/* Faults in the huge pages [lo, hi) (TI__HUGE boundaries, not yet touched) in order, each
 * advised MADV_HUGEPAGE first, until one is slow. */
TI__PRIVATE void ti__huge_fault(uintptr_t lo, uintptr_t hi) {
    for (; lo < hi && !ti__atomic_load(&ti__huge_slow); lo += TI__HUGE) {
        if (madvise((void *)lo, TI__HUGE, TI__MADV_HUGEPAGE) != 0) return; /* THP off */
        double t0 = ti__now_ms();
        *(volatile unsigned char *)lo = 0; /* not yet written: any byte will do */
        if (ti__now_ms() - t0 > ti__huge_slow_ms) ti__atomic_store(&ti__huge_slow, 1);
    }
}
#endif

/* Where huge pages were slow to fault in (above), the whole huge pages of [p, p + size), a
 * part of a block of the default allocator already written, are advised now: the kernel's
 * khugepaged may then gather them into huge pages in the background (about 16 MiB each 10 s
 * by its defaults), at no cost to a run, and a long-lived session gets the runs' TLB gain
 * back. Nothing otherwise: the blocks were advised when allocated, or may not be. */
TI__PRIVATE void ti__huge_advise_filled(const ti_allocator *a, const void *p, size_t size) {
#ifdef TI__HUGE
    if (p == NULL || (a != NULL && a->alloc != NULL) || !ti__atomic_load(&ti__huge_slow)) return;
    uintptr_t lo = ti__align_up((uintptr_t)p, TI__HUGE);
    uintptr_t hi = ((uintptr_t)p + size) & ~(uintptr_t)(TI__HUGE - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, TI__MADV_HUGEPAGE);
#else
    (void)a, (void)p, (void)size;
#endif
}

TI__PRIVATE int ti__allocator_valid(const ti_allocator *a) {
    return a == NULL || (a->alloc == NULL) == (a->free == NULL);
}

/* ti__malloc with huge pages (TI__HUGE) for a block that size: huge 0: none; 1: on a huge
 * page boundary, its whole huge pages faulted in now (ti__huge_fault); 2: on the boundary,
 * none faulted in (a pool's slab: ti__pool_alloc faults them in as it hands them out). */
TI__PRIVATE void *ti__malloc_pages(const ti_allocator *a, size_t size, int huge) {
    if (size == 0) size = 1;
    if (a != NULL && a->alloc != NULL) return a->alloc(size, TI__ALIGN, a->user);
    /* Default: over-allocate and keep the raw pointer just before the aligned block. */
    size_t align = TI__ALIGN, total;
#ifdef TI__HUGE
    if (size >= TI__HUGE && huge) align = TI__HUGE;
#else
    (void)huge;
#endif
    if (!ti__add_size(size, align + sizeof(void *), &total)) return NULL;
    unsigned char *raw = (unsigned char *)TI_MALLOC(total);
    if (raw == NULL) return NULL;
    uintptr_t p = ti__align_up((uintptr_t)raw + sizeof(void *), align);
    memcpy((unsigned char *)p - sizeof(void *), &raw, sizeof(void *));
#ifdef TI__HUGE
    /* the whole huge pages only: a partial last one would be resident whole */
    if (align == TI__HUGE && huge == 1) ti__huge_fault(p, p + (size & ~(TI__HUGE - 1)));
#endif
    return (void *)p;
}

TI__PRIVATE void *ti__malloc(const ti_allocator *a, size_t size) {
    return ti__malloc_pages(a, size, 1);
}

/* A block written once, read once and freed (a model file's bytes, which parsing copies
 * from): on huge pages it would only pay their faults. */
TI__PRIVATE void *ti__malloc_brief(const ti_allocator *a, size_t size) {
    return ti__malloc_pages(a, size, 0);
}

TI__PRIVATE void *ti__calloc(const ti_allocator *a, size_t size) {
    void *p = ti__malloc(a, size);
    if (p != NULL) memset(p, 0, size ? size : 1);
    return p;
}

TI__PRIVATE void ti__free(const ti_allocator *a, void *p, size_t size) {
    if (p == NULL) return;
    if (size == 0) size = 1;
    if (a != NULL && a->free != NULL) {
        a->free(p, size, a->user);
        return;
    }
    void *raw;
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof(void *));
    TI_FREE(raw);
}

TI__PRIVATE int ti__grow(const ti_allocator *a, void **arr, int *cap, int need, size_t elem_bytes) {
    if (need <= *cap) return 1;
    if (need < 0 || need > INT_MAX / 2) return 0;
    int ncap = *cap ? *cap : 8;
    while (ncap < need) ncap *= 2;
    size_t old_bytes, new_bytes;
    if (!ti__mul_size((size_t)*cap, elem_bytes, &old_bytes) ||
        !ti__mul_size((size_t)ncap, elem_bytes, &new_bytes))
        return 0;
    void *n = ti__malloc(a, new_bytes);
    if (n == NULL) return 0;
    if (*arr != NULL) {
        memcpy(n, *arr, old_bytes);
        ti__free(a, *arr, old_bytes);
    }
    memset((char *)n + old_bytes, 0, new_bytes - old_bytes);
    *arr = n;
    *cap = ncap;
    return 1;
}

/* ---- pool: small requests share blocks; big ones get a block of their own or a slab ---- */
/* Where the default allocator advises huge pages (TI__HUGE), requests too big for a shared
 * block and too small for huge pages of their own (packed weights, folded constants) are
 * carved instead from slabs of TI__POOL_SLAB bytes, first fit, 64-byte aligned: most of
 * MobileNetV2's weight blocks are below 2 MiB, and each on its own 4 KiB pages took 2-3 % of a
 * run. A slab's untouched tail is address space only; the huge page its last request ends in
 * is resident whole (up to 2 MiB a slab, and one slab holds all of a MobileNet's). */
struct ti__pool_block {
    ti__pool_block *next;
    size_t size, used; /* bytes of data[] */
    int slab;          /* one of the pool's slabs (huge pages faulted in as handed out) */
};
#define TI__POOL_BLOCK 65536
#define TI__POOL_HDR ((sizeof(ti__pool_block) + 15) & ~(size_t)15)
#define TI__POOL_SLAB ((size_t)32 << 20)

/* A new block of at least size bytes at the head of *list, NULL when out of memory. */
TI__PRIVATE ti__pool_block *ti__pool_block_new(ti__pool *p, ti__pool_block **list, size_t size) {
    size_t total;
    if (!ti__add_size(size, TI__POOL_HDR, &total)) return NULL;
    int slab = list == &p->slabs;
    ti__pool_block *b = (ti__pool_block *)ti__malloc_pages(&p->al, total, slab ? 2 : 1);
    if (b == NULL) return NULL;
#ifdef TI__HUGE
    /* a slab's first huge page before its header is written; the others as handed out */
    if (slab) ti__huge_fault((uintptr_t)b, (uintptr_t)b + TI__HUGE);
#endif
    b->size = size;
    b->used = 0;
    b->slab = slab;
    b->next = *list;
    *list = b;
    p->used_bytes += total;
    return b;
}

/* Bytes of b's data from which size bytes aligned to align fit after what is used, or
 * (size_t)-1. */
TI__PRIVATE size_t ti__pool_fit(const ti__pool_block *b, size_t size, size_t align) {
    uintptr_t data = (uintptr_t)b + TI__POOL_HDR, at = data + b->used;
    size_t off = (size_t)(ti__align_up(at, align) - data);
    return off <= b->size && b->size - off >= size ? off : (size_t)-1;
}

/* ti__pool_alloc without the zeroing, for a caller that writes every byte it will read (a
 * constant's data, copied in): zeroing MobileNetV2's 14 MB of weights before copying them
 * was a tenth of its load. */
TI__PRIVATE void *ti__pool_alloc_raw(ti__pool *p, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    ti__pool_block *b = p->head;
    size_t off = 0;
    if (size > TI__POOL_BLOCK / 4) {
#ifdef TI__HUGE
        /* the default allocator, and 2 MiB of such requests already (a small model's few
         * stay off huge pages, which would cost it 2 MiB): a slab */
        int slab = p->al.alloc == NULL && size < TI__HUGE && p->mid_bytes >= TI__HUGE;
        p->mid_bytes += size < TI__HUGE ? size : 0;
        if (slab) {
            for (b = p->slabs; b != NULL && (off = ti__pool_fit(b, size, 64)) == (size_t)-1;)
                b = b->next;
            if (b == NULL) {
                if ((b = ti__pool_block_new(p, &p->slabs, TI__POOL_SLAB)) == NULL) return NULL;
                off = ti__pool_fit(b, size, 64);
            }
        } else
#endif
        { /* a block of its own, behind the partly used small block at the head */
            ti__pool_block **at = p->head != NULL ? &p->head->next : &p->head;
            if ((b = ti__pool_block_new(p, at, size)) == NULL) return NULL;
        }
    } else if (b == NULL || b->size - b->used < size) {
        if ((b = ti__pool_block_new(p, &p->head, TI__POOL_BLOCK)) == NULL) return NULL;
    } else {
        off = b->used;
    }
    unsigned char *data = (unsigned char *)b + TI__POOL_HDR, *r = data + off;
#ifdef TI__HUGE
    if (b->slab) { /* its huge pages that this request is the first to reach */
        uintptr_t end = ((uintptr_t)data + b->size) & ~(uintptr_t)(TI__HUGE - 1);
        ti__huge_fault(ti__align_up((uintptr_t)data + b->used, TI__HUGE),
                       TI__MIN(ti__align_up((uintptr_t)r + size, TI__HUGE), end));
    }
#endif
    b->used = off + size;
    return r;
}

TI__PRIVATE void *ti__pool_alloc(ti__pool *p, size_t size) {
    void *r = ti__pool_alloc_raw(p, size);
    if (r != NULL) memset(r, 0, (size + 15) & ~(size_t)15);
    return r;
}

/* ti__huge_advise_filled for the used part of each of the pool's blocks */
TI__PRIVATE void ti__pool_advise_filled(const ti__pool *p) {
    const ti__pool_block *lists[2] = {p->head, p->slabs};
    for (int l = 0; l < 2; l++)
        for (const ti__pool_block *b = lists[l]; b != NULL; b = b->next)
            ti__huge_advise_filled(&p->al, b, TI__POOL_HDR + b->used);
}

TI__PRIVATE char *ti__pool_strndup(ti__pool *p, const char *s, size_t n) {
    char *r = (char *)ti__pool_alloc(p, n + 1);
    if (r == NULL) return NULL;
    if (n) memcpy(r, s, n);
    r[n] = 0;
    return r;
}

TI__PRIVATE void ti__pool_release(ti__pool *p) {
    ti__pool_block *lists[2] = {p->head, p->slabs};
    for (int l = 0; l < 2; l++) {
        ti__pool_block *b = lists[l];
        while (b != NULL) {
            ti__pool_block *next = b->next;
            ti__free(&p->al, b, b->size + TI__POOL_HDR);
            b = next;
        }
    }
    p->head = p->slabs = NULL;
    p->mid_bytes = 0;
    p->used_bytes = 0;
}
