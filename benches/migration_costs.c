/* The CPU cost of each event that [vm.migration.cost] charges, measured on
 * this machine, for the keys' defaults where no published figure meets the
 * rule (docs/tiered-memory.md, "How a default cost is chosen", rule 2).
 *
 *   cc -O2 -pthread -o /tmp/migration_costs benches/migration_costs.c && /tmp/migration_costs
 *
 * (an argument sets the number of rounds, 101 by default).
 *
 * Every figure is the median over the rounds of each round's mean (a
 * round times a batch of the event); the spread printed beside it is the
 * rounds' 10th and 90th percentiles. Times are the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID; see now_ns). A difference is taken within each
 * round before the median, so that a shared machine's drifting load cancels
 * as far as it can. The process pins itself to CPU 0; the shootdown's
 * second thread runs on CPU 1.
 *
 * A user program cannot cause the kernel's own events (a migration's unmap,
 * a NUMA hint fault, task_numa_work's scan), so each is measured by the
 * closest event it can cause, and what differs is said here:
 *
 *   pte_update_ns   one 4 KiB page of its own mapping made PROT_NONE and then
 *                   PROT_READ|PROT_WRITE again by two mprotect calls, one
 *                   thread: two page-table updates of one page (a migration
 *                   makes two: the PTE becomes a migration entry, then the
 *                   new page's PTE), with the local TLB flush. Differs: it
 *                   includes two system calls and the VMA lookup; it has no
 *                   reverse-map walk and no page lock, which the kernel's
 *                   migration adds.
 *   tlb_shootdown_ns the same pair while a second thread of the process spins
 *                   on CPU 1, less the one-thread pair of the same round,
 *                   divided by the TLB-shootdown interrupts CPU 1 received
 *                   per pair (/proc/interrupts, "TLB"; printed): the
 *                   initiator's cost of one single-page shootdown to one
 *                   other CPU, the IPI's round trip included. The spinner
 *                   runs at SCHED_FIFO priority 1 where allowed (root), so
 *                   that other programs do not take CPU 1 from it.
 *   hint_fault_ns   a read of a page the page cache holds but the process
 *                   has not mapped (a tmpfs file whose every 16th page is
 *                   written, so that fault-around finds one page per 64 KiB
 *                   window and maps exactly one; each round starts with
 *                   MADV_DONTNEED, which unmaps the pages and keeps them
 *                   cached), less the same reads with the pages mapped: one
 *                   minor fault that maps an existing page, no allocation,
 *                   no zeroing, no copy. The faults counted by getrusage are
 *                   printed per read. Differs from a NUMA hint fault, which
 *                   finds the PTE present but PROT_NONE and restores it: this
 *                   one looks the page up in the page cache and takes a
 *                   reference and a mapcount, which a hint fault does not;
 *                   the hint fault's tiering checks (the scan-to-fault time,
 *                   the promotion decision) are not in it. A PROT_NONE page
 *                   restored from a SIGSEGV handler would be further off: a
 *                   signal's delivery and return and an mprotect call, none
 *                   of which a hint fault makes.
 *   scan_ns         one mprotect(PROT_NONE) over a 64 MiB mapping of present
 *                   4 KiB pages (huge pages refused with MADV_NOHUGEPAGE),
 *                   divided by its pages: change_protection(), the walk that
 *                   task_numa_work()'s change_prot_numa() makes, with its one
 *                   range flush spread over the pages. Differs: the NUMA
 *                   scan also skips some pages (already PROT_NONE, shared,
 *                   on the top tier in tiering mode) and stamps the scan time
 *                   in the page.
 *   sample_ns       the slowdown per sample of a loop of known work while a
 *                   precise (PEBS on Intel) retired-instruction event samples
 *                   it every SAMPLE_PERIOD instructions into a ring buffer,
 *                   against the same loop unsampled: the method of Akiyama
 *                   and Hirofuchi (ROSS 2017). Where the machine has no
 *                   hardware PMU for the process (a virtual machine without
 *                   one, perf_event_paranoid too high) it prints why and no
 *                   figure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define ROUNDS_MAX 1001
#define PAIRS 2000           /* mprotect pairs per round */
#define FAULTS 4096          /* minor faults per round */
#define WINDOW 16            /* pages per fault-around window (64 KiB) */
#define SCAN_PAGES 16384     /* 64 MiB scanned per round */
#define SAMPLE_PERIOD 10007  /* instructions per sample (a prime, as HeMem's) */
#define WORK 20000000UL      /* loop iterations per sampling round */

/* The calling thread's CPU time (user and system), not the wall clock: on a
 * shared machine a thread that is descheduled mid-batch would otherwise
 * count the other programs' time as its own. A fault's or a system call's
 * kernel work, and an initiator's wait for a shootdown's acknowledgement
 * (a busy wait), are CPU time of the thread that causes them. */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Rounds: 101 unless the first argument says otherwise (the tests run 11). */
static int rounds = 101;

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v; prints "name median p10 p90". */
static double report(const char *name, double *v, const char *note) {
    qsort(v, rounds, sizeof *v, cmp);
    printf("%-17s %8.0f   (p10 %.0f, p90 %.0f)%s%s\n", name, v[rounds / 2], v[rounds / 10],
           v[rounds - 1 - rounds / 10], note ? "  " : "", note ? note : "");
    return v[rounds / 2];
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) die("sched_setaffinity");
}

/* TLB-shootdown interrupts received by CPU 1 so far ("TLB:" row). */
static long tlb_irqs_cpu1(void) {
    char line[4096];
    long c0, c1;
    FILE *f = fopen("/proc/interrupts", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ') p++;
        if (strncmp(p, "TLB:", 4) == 0 && sscanf(p + 4, "%ld %ld", &c0, &c1) == 2) {
            fclose(f);
            return c1;
        }
    }
    fclose(f);
    return -1;
}

static char *one_page(void) {
    char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) die("mmap");
    p[0] = 1;
    return p;
}

/* PAIRS times: the page made inaccessible and accessible again, then read
 * (so that the next PROT_NONE has a TLB entry to flush). Mean ns per pair. */
static double pairs(char *p) {
    volatile char sink = 0;
    double t0 = now_ns();
    for (int i = 0; i < PAIRS; i++) {
        if (mprotect(p, PAGE, PROT_NONE) != 0) die("mprotect");
        if (mprotect(p, PAGE, PROT_READ | PROT_WRITE) != 0) die("mprotect");
        sink ^= p[0];
    }
    (void)sink;
    return (now_ns() - t0) / PAIRS;
}

/* The shootdown's process: its main thread on CPU 0 runs a batch of pairs
 * each time the parent asks, while its second thread spins on CPU 1 (and
 * waits, off the CPU, between batches). */
static volatile int spin_go, spinning, quit;

static void *spinner(void *arg) {
    (void)arg;
    pin(1);
    /* Real-time priority, where allowed, so that the spinner holds CPU 1
     * during a batch on a loaded machine: a shootdown is sent only to a CPU
     * that is running the process. The kernel's real-time throttling
     * (sched_rt_runtime_us) still leaves the CPU 5% to others. */
    struct sched_param sp = {.sched_priority = 1};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
        fprintf(stderr, "note: the spinner runs at normal priority (no SCHED_FIFO)\n");
    while (!quit) {
        if (!spin_go) {
            spinning = 0;
            usleep(100);
            continue;
        }
        spinning = 1;
        while (spin_go) __asm__ volatile("pause");
    }
    return NULL;
}

static void two_thread_child(int req, int resp) {
    pthread_t t;
    char *p = one_page();
    pin(0);
    if (pthread_create(&t, NULL, spinner, NULL) != 0) die("pthread_create");
    char c;
    while (read(req, &c, 1) == 1) {
        spin_go = 1;
        while (!spinning) __asm__ volatile("pause");
        double ns = pairs(p);
        spin_go = 0;
        if (write(resp, &ns, sizeof ns) != sizeof ns) die("write");
    }
    quit = 1;
    pthread_join(t, NULL);
    _exit(0);
}

static long minflt(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static long perf_open(struct perf_event_attr *a) {
    return syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
}

static double work(unsigned long n) {
    volatile unsigned long x = 1;
    double t0 = now_ns();
    for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return now_ns() - t0;
}

/* Prints sample_ns, or why it cannot be measured here. */
static void sampling(void) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.sample_period = SAMPLE_PERIOD;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
    a.precise_ip = 2;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    long fd = perf_open(&a);
    if (fd < 0) {
        printf("sample_ns         not measured: perf_event_open(precise retired instructions, "
               "sampling) failed: %s (no hardware PMU for this process here)\n",
               strerror(errno));
        return;
    }
    size_t len = (size_t)(1 + 1024) * PAGE; /* 4 MiB of samples: none lost */
    void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (ring == MAP_FAILED) die("mmap perf ring");
    static double v[ROUNDS_MAX], n[ROUNDS_MAX];
    for (int r = 0; r < rounds; r++) {
        double plain = work(WORK);
        uint64_t before, after;
        if (read((int)fd, &before, sizeof before) != sizeof before) die("read counter");
        ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0);
        double sampled = work(WORK);
        ioctl((int)fd, PERF_EVENT_IOC_DISABLE, 0);
        if (read((int)fd, &after, sizeof after) != sizeof after) die("read counter");
        double samples = (double)(after - before) / SAMPLE_PERIOD;
        n[r] = samples;
        v[r] = samples > 0 ? (sampled - plain) / samples : 0;
        /* Empty the ring so that the next round's samples are not lost. */
        struct perf_event_mmap_page *m = ring;
        m->data_tail = m->data_head;
    }
    report("sample_ns", v, NULL);
    qsort(n, rounds, sizeof *n, cmp);
    printf("  (%.0f samples per round, one per %d instructions)\n", n[rounds / 2], SAMPLE_PERIOD);
    munmap(ring, len);
    close((int)fd);
}

int main(int argc, char **argv) {
    if (argc > 1) rounds = atoi(argv[1]);
    if (rounds < 1 || rounds > ROUNDS_MAX) {
        fprintf(stderr, "rounds must be 1 to %d\n", ROUNDS_MAX);
        return 2;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pin(0);

    /* The shootdown's two-thread process, forked before this one maps
     * anything else (it needs only its own page). */
    int req[2], resp[2];
    pid_t child = -1;
    if (ncpu >= 2) {
        if (pipe(req) != 0 || pipe(resp) != 0) die("pipe");
        child = fork();
        if (child < 0) die("fork");
        if (child == 0) {
            close(req[1]);
            close(resp[0]);
            two_thread_child(req[0], resp[1]);
        }
        close(req[0]);
        close(resp[1]);
    }

    char *page = one_page();

    /* The file for the minor faults: every WINDOW-th page written. */
    char path[] = "/dev/shm/tierlab-migration-costs-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) die("mkstemp");
    unlink(path);
    size_t flen = (size_t)FAULTS * WINDOW * PAGE;
    if (ftruncate(fd, (off_t)flen) != 0) die("ftruncate");
    static char buf[PAGE];
    memset(buf, 3, PAGE);
    for (size_t i = 0; i < FAULTS; i++)
        if (pwrite(fd, buf, PAGE, (off_t)(i * WINDOW * PAGE)) != PAGE) die("pwrite");
    char *file = mmap(NULL, flen, PROT_READ, MAP_SHARED, fd, 0);
    if (file == MAP_FAILED) die("mmap file");
    static unsigned order[FAULTS];
    srand(7);
    for (unsigned i = 0; i < FAULTS; i++) order[i] = i;
    for (unsigned i = FAULTS - 1; i > 0; i--) {
        unsigned j = (unsigned)rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }

    /* The scanned range: present 4 KiB pages. */
    size_t slen = (size_t)SCAN_PAGES * PAGE;
    char *scan = mmap(NULL, slen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (scan == MAP_FAILED) die("mmap scan");
    if (madvise(scan, slen, MADV_NOHUGEPAGE) != 0) die("madvise");
    memset(scan, 1, slen);

    static double one[ROUNDS_MAX], two[ROUNDS_MAX], shoot[ROUNDS_MAX], ipis[ROUNDS_MAX];
    static double fault[ROUNDS_MAX], mapped[ROUNDS_MAX], hint[ROUNDS_MAX], flt[ROUNDS_MAX];
    static double sc[ROUNDS_MAX];
    volatile char sink = 0;
    for (int r = 0; r < rounds; r++) {
        one[r] = pairs(page);

        if (child > 0) {
            long i0 = tlb_irqs_cpu1();
            char c = 'g';
            if (write(req[1], &c, 1) != 1) die("write");
            if (read(resp[0], &two[r], sizeof two[r]) != sizeof two[r]) die("read");
            long i1 = tlb_irqs_cpu1();
            ipis[r] = (i0 >= 0 && i1 >= 0) ? (double)(i1 - i0) / PAIRS : 0;
            shoot[r] = ipis[r] > 0 ? (two[r] - one[r]) / ipis[r] : 0;
        }

        if (madvise(file, flen, MADV_DONTNEED) != 0) die("madvise");
        long f0 = minflt();
        double t0 = now_ns();
        for (unsigned i = 0; i < FAULTS; i++) sink ^= file[(size_t)order[i] * WINDOW * PAGE];
        fault[r] = (now_ns() - t0) / FAULTS;
        flt[r] = (double)(minflt() - f0) / FAULTS;
        t0 = now_ns();
        for (unsigned i = 0; i < FAULTS; i++) sink ^= file[(size_t)order[i] * WINDOW * PAGE];
        mapped[r] = (now_ns() - t0) / FAULTS;
        hint[r] = fault[r] - mapped[r];

        t0 = now_ns();
        if (mprotect(scan, slen, PROT_NONE) != 0) die("mprotect scan");
        sc[r] = (now_ns() - t0) / SCAN_PAGES;
        if (mprotect(scan, slen, PROT_READ | PROT_WRITE) != 0) die("mprotect scan");
    }
    (void)sink;

    printf("event             median   (spread: rounds' p10, p90), ns; %d rounds\n", rounds);
    report("pte_update_ns", one, "(one thread, per PROT_NONE + PROT_READ|WRITE pair)");
    if (child > 0) {
        report("two_threads_ns", two, "(the same pair, a second thread spinning on CPU 1)");
        qsort(ipis, rounds, sizeof *ipis, cmp);
        double ipi = ipis[rounds / 2];
        char note[96];
        snprintf(note, sizeof note, "(per shootdown; CPU 1 received %.2f per pair)", ipi);
        report("tlb_shootdown_ns", shoot, note);
        close(req[1]);
        waitpid(child, NULL, 0);
    } else {
        printf("tlb_shootdown_ns  not measured: one CPU online\n");
    }
    report("fault_read_ns", fault, "(a read that takes a minor fault)");
    report("mapped_read_ns", mapped, "(the same read, page mapped)");
    qsort(flt, rounds, sizeof *flt, cmp);
    char note[64];
    snprintf(note, sizeof note, "(minor faults per read: %.3f)", flt[rounds / 2]);
    report("hint_fault_ns", hint, note);
    report("scan_ns", sc, "(per page of a 64 MiB mprotect(PROT_NONE))");
    sampling();
    return 0;
}
