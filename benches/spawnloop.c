/*
 * spawnloop: the physical limit for "run /bin/true over N arguments".
 *
 * Usage: spawnloop THREADS BATCH TOTAL [PROGRAM]
 *
 * Builds TOTAL short arguments ("1".."TOTAL", as seq prints them), splits
 * them up front into argv arrays of BATCH arguments each, then starts
 * THREADS pthreads that each take batches from a shared counter and run
 * posix_spawn("/bin/true", argv) + waitpid until none are left.  Nothing
 * is read, parsed or copied while the clock runs: what is left is the cost
 * of the kernel creating, exec'ing and reaping processes, i.e. the ceiling
 * any xargs-like tool can reach on this machine.
 *
 * BATCH may be "max": the largest batch that fits ARG_MAX, computed as
 * sysconf(_SC_ARG_MAX) minus the size of the environment minus a safety
 * margin, each argument costing strlen+1 bytes plus an 8-byte pointer,
 * capped at 65536.
 *
 * PROGRAM (an absolute path, default /bin/true) is what runs, e.g. /bin/echo
 * for the limit of one echo per value; its output goes to /dev/null (opened
 * in each child), so that only this program's own line reaches stdout.
 *
 * Prints one line: threads, batch, total, spawns, seconds, args/s.
 *
 * Build: cc -O2 -pthread -o spawnloop spawnloop.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define BATCH_CAP 65536L
#define MARGIN 4096L

static const char *prog = "/bin/true";
static posix_spawn_file_actions_t *actions; /* stdout to /dev/null, with PROGRAM */
static char ***batches;        /* batches[i] is a NULL-terminated argv */
static long nbatches;
static atomic_long next_batch;
static atomic_long failures;

static long env_bytes(void)
{
    long n = 0;
    for (char **e = environ; *e; e++)
        n += (long)strlen(*e) + 1 + (long)sizeof(char *);
    return n + (long)sizeof(char *);
}

static long max_batch(long total, char **args)
{
    long room = sysconf(_SC_ARG_MAX);
    if (room <= 0)
        room = 131072;
    room -= env_bytes() + MARGIN;
    room -= (long)strlen(prog) + 1 + (long)sizeof(char *);
    /* The widest arguments are the last ones: size the batch for them so
     * every batch fits. */
    long widest = total > 0 ? (long)strlen(args[total - 1]) : 1;
    long per = widest + 1 + (long)sizeof(char *);
    long b = room / per;
    if (b > BATCH_CAP)
        b = BATCH_CAP;
    if (b < 1)
        b = 1;
    return b;
}

static void *worker(void *unused)
{
    (void)unused;
    for (;;) {
        long i = atomic_fetch_add(&next_batch, 1);
        if (i >= nbatches)
            return NULL;
        pid_t pid;
        int rc = posix_spawn(&pid, prog, actions, NULL, batches[i], environ);
        if (rc != 0) {
            fprintf(stderr, "spawnloop: posix_spawn: %s\n", strerror(rc));
            atomic_fetch_add(&failures, 1);
            continue;
        }
        int status;
        while (waitpid(pid, &status, 0) < 0) {
            if (errno != EINTR) {
                perror("spawnloop: waitpid");
                exit(1);
            }
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            atomic_fetch_add(&failures, 1);
    }
}

static long parse_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1) {
        fprintf(stderr, "spawnloop: bad %s: %s\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s THREADS BATCH|max TOTAL [PROGRAM]\n", argv[0]);
        return 2;
    }
    static posix_spawn_file_actions_t quiet;
    if (argc == 5) {
        prog = argv[4];
        if (posix_spawn_file_actions_init(&quiet) != 0 ||
            posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0) != 0) {
            fprintf(stderr, "spawnloop: cannot set up the file actions\n");
            return 1;
        }
        actions = &quiet;
    }
    long threads = parse_long(argv[1], "THREADS");
    long total = parse_long(argv[3], "TOTAL");

    /* One buffer holds all argument strings back to back. */
    size_t cap = (size_t)total * 21;
    char *text = malloc(cap);
    char **args = malloc((size_t)total * sizeof(char *));
    if (!text || !args) {
        perror("spawnloop: malloc");
        return 1;
    }
    size_t off = 0;
    for (long i = 0; i < total; i++) {
        args[i] = text + off;
        off += (size_t)snprintf(text + off, cap - off, "%ld", i + 1) + 1;
    }

    long batch = strcmp(argv[2], "max") == 0 ? max_batch(total, args)
                                             : parse_long(argv[2], "BATCH");

    nbatches = (total + batch - 1) / batch;
    batches = malloc((size_t)nbatches * sizeof(char **));
    char **slots = malloc((size_t)(total + 2 * nbatches) * sizeof(char *));
    if (!batches || !slots) {
        perror("spawnloop: malloc");
        return 1;
    }
    char **p = slots;
    for (long b = 0; b < nbatches; b++) {
        long first = b * batch;
        long n = total - first < batch ? total - first : batch;
        batches[b] = p;
        *p++ = (char *)"true";
        memcpy(p, args + first, (size_t)n * sizeof(char *));
        p += n;
        *p++ = NULL;
    }

    pthread_t *tids = malloc((size_t)threads * sizeof(pthread_t));
    if (!tids) {
        perror("spawnloop: malloc");
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long t = 0; t < threads; t++) {
        int rc = pthread_create(&tids[t], NULL, worker, NULL);
        if (rc != 0) {
            fprintf(stderr, "spawnloop: pthread_create: %s\n", strerror(rc));
            return 1;
        }
    }
    for (long t = 0; t < threads; t++)
        pthread_join(tids[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    double secs = (double)(t1.tv_sec - t0.tv_sec) +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("threads=%ld batch=%ld total=%ld spawns=%ld seconds=%.6f "
           "args_per_s=%.0f\n",
           threads, batch, total, nbatches, secs,
           secs > 0 ? (double)total / secs : 0.0);
    long f = atomic_load(&failures);
    if (f) {
        fprintf(stderr, "spawnloop: %ld invocations failed\n", f);
        return 1;
    }
    return 0;
}
