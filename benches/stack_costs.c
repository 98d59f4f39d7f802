/* The host's file-cache costs per 4 KiB block, for the S5 reproduction
 * (docs/reproduce-s5.md): a cached read through the system call, the memory
 * copy inside it, and what inserting a new page into the page cache adds.
 *
 *   cc -O2 -o /tmp/stack_costs benches/stack_costs.c && /tmp/stack_costs
 *
 * Each round times PAGES operations of each kind, one after the other, each
 * at a page picked in a fixed random order from a 64 MiB file or buffer
 * (larger than the processor's caches, so a copy reads DRAM as a page-cache
 * read of a large footprint does). Every figure is the median over ROUNDS
 * rounds of that round's mean; the two differences are taken within each
 * round before the median, so that a shared machine's drifting load
 * cancels as far as it can:
 *
 *   copy_ns      memcpy of 4 KiB from a random page of a 64 MiB buffer
 *   read_ns      pread of 4 KiB from a tmpfs file whose pages are all cached
 *   overwrite_ns pwrite of 4 KiB over a page the file already holds
 *   insert_write_ns pwrite of 4 KiB into a hole: the kernel allocates a page,
 *                adds it to the page cache (and its LRU and accounting) and
 *                copies into it
 *   stack_ns     = read_ns - copy_ns: the system call, the VFS and the
 *                page-cache lookup of a cached read, without its copy
 *   insert_ns    = insert_write_ns - overwrite_ns: allocating and inserting
 *                the page, without its copy
 *
 * tmpfs keeps files only in the page cache, so a write into a hole is the
 * insertion path of the page cache itself (a full-page write is not zeroed
 * first) with no device behind it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define PAGES 16384 /* 64 MiB */
#define ROUNDS 101

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v) {
    qsort(v, ROUNDS, sizeof *v, cmp);
    return v[ROUNDS / 2];
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

int main(void) {
    static unsigned order[PAGES];
    double copy[ROUNDS], rd[ROUNDS], ow[ROUNDS], ins[ROUNDS], st[ROUNDS], in[ROUNDS];
    char *src = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *buf = aligned_alloc(PAGE, PAGE);
    char path[] = "/dev/shm/tierlab-stack-costs-XXXXXX";
    int fd = mkstemp(path);
    if (src == MAP_FAILED || !buf) die("allocate");
    if (fd < 0) die("mkstemp");
    unlink(path);
    memset(src, 1, (size_t)PAGES * PAGE);
    memset(buf, 2, PAGE);
    srand(5);
    for (unsigned i = 0; i < PAGES; i++) order[i] = i;
    for (unsigned i = PAGES - 1; i > 0; i--) {
        unsigned j = (unsigned)rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    volatile char sink = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (unsigned i = 0; i < PAGES; i++) {
            memcpy(buf, src + (size_t)order[i] * PAGE, PAGE);
            sink ^= buf[i % PAGE];
        }
        copy[r] = (now_ns() - t0) / PAGES;

        if (ftruncate(fd, 0) != 0) die("ftruncate");
        if (ftruncate(fd, (off_t)PAGES * PAGE) != 0) die("ftruncate");
        t0 = now_ns();
        for (unsigned i = 0; i < PAGES; i++)
            if (pwrite(fd, buf, PAGE, (off_t)order[i] * PAGE) != PAGE) die("pwrite");
        ins[r] = (now_ns() - t0) / PAGES;

        t0 = now_ns();
        for (unsigned i = 0; i < PAGES; i++)
            if (pwrite(fd, buf, PAGE, (off_t)order[i] * PAGE) != PAGE) die("pwrite");
        ow[r] = (now_ns() - t0) / PAGES;

        t0 = now_ns();
        for (unsigned i = 0; i < PAGES; i++) {
            if (pread(fd, buf, PAGE, (off_t)order[i] * PAGE) != PAGE) die("pread");
            sink ^= buf[i % PAGE];
        }
        rd[r] = (now_ns() - t0) / PAGES;
        st[r] = rd[r] - copy[r];
        in[r] = ins[r] - ow[r];
    }
    double c = median(copy), t = median(rd), o = median(ow), w = median(ins);
    printf("copy_ns %.0f\nread_ns %.0f\noverwrite_ns %.0f\ninsert_write_ns %.0f\n", c, t, o, w);
    printf("stack_ns %.0f\ninsert_ns %.0f\n", median(st), median(in));
    return sink == 42;
}
