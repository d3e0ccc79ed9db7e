/* Allocation: the user's hooks or TI_MALLOC/TI_FREE, 64-byte aligned blocks, growable
 * arrays and the pool that owns a model's many small pieces. Relies on config.h.
 * Must not allocate through anything but the ti_allocator it is given. */

#define TI__ALIGN 64

TI__PRIVATE int ti__allocator_valid(const ti_allocator *a) {
    return a == NULL || (a->alloc == NULL) == (a->free == NULL);
}

TI__PRIVATE void *ti__malloc(const ti_allocator *a, size_t size) {
    if (size == 0) size = 1;
    if (a != NULL && a->alloc != NULL) return a->alloc(size, TI__ALIGN, a->user);
    /* Default: over-allocate and keep the raw pointer just before the aligned block. */
    size_t total;
    if (!ti__add_size(size, TI__ALIGN + sizeof(void *), &total)) return NULL;
    unsigned char *raw = (unsigned char *)TI_MALLOC(total);
    if (raw == NULL) return NULL;
    uintptr_t p = ((uintptr_t)raw + sizeof(void *) + TI__ALIGN - 1) & ~(uintptr_t)(TI__ALIGN - 1);
    memcpy((unsigned char *)p - sizeof(void *), &raw, sizeof(void *));
    return (void *)p;
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

/* ---- pool: a list of blocks; big requests get a block of their own ---- */
struct ti__pool_block {
    ti__pool_block *next;
    size_t size, used; /* bytes of data[] */
};
#define TI__POOL_BLOCK 65536
#define TI__POOL_HDR ((sizeof(ti__pool_block) + 15) & ~(size_t)15)

TI__PRIVATE void *ti__pool_alloc(ti__pool *p, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    ti__pool_block *b = p->head;
    if (b == NULL || b->size - b->used < size) {
        size_t bsize = size > TI__POOL_BLOCK / 4 ? size : TI__POOL_BLOCK, total;
        if (!ti__add_size(bsize, TI__POOL_HDR, &total)) return NULL;
        ti__pool_block *nb = (ti__pool_block *)ti__malloc(&p->al, total);
        if (nb == NULL) return NULL;
        nb->size = bsize;
        nb->used = 0;
        p->used_bytes += total;
        if (b != NULL && size > TI__POOL_BLOCK / 4) {
            /* keep the partly used small block at the head */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            p->head = nb;
        }
        b = nb;
    }
    void *r = (unsigned char *)b + TI__POOL_HDR + b->used;
    b->used += size;
    memset(r, 0, size);
    return r;
}

TI__PRIVATE char *ti__pool_strndup(ti__pool *p, const char *s, size_t n) {
    char *r = (char *)ti__pool_alloc(p, n + 1);
    if (r == NULL) return NULL;
    if (n) memcpy(r, s, n);
    r[n] = 0;
    return r;
}

TI__PRIVATE void ti__pool_release(ti__pool *p) {
    ti__pool_block *b = p->head;
    while (b != NULL) {
        ti__pool_block *next = b->next;
        ti__free(&p->al, b, b->size + TI__POOL_HDR);
        b = next;
    }
    p->head = NULL;
    p->used_bytes = 0;
}
