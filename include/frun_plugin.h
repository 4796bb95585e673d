/* frun_plugin.h: the interface between frun -C SO:FN and a plugin library.
 *
 * A plugin is a shared library with a function called once per batch:
 *
 *     int FN(int argc, char **argv);
 *
 * argv holds the words given after -C SO:FN, then the batch's records (there is no program
 * name: argv[0] is the first word or record), and argv[argc] is NULL. With -s the records are
 * on stdin instead. What FN prints on stdout is the batch's output; its return value is the
 * batch's exit status (0 ok; 200 always retried; any other non-zero retried with -E; a value
 * outside 0..255 counts as 1). A crash or exit() fails the attempt like a killed command.
 *
 * To be handed a context as well, define the opt-in symbol (FRUN_PLUGIN_USES_CTX does) and
 * take a third argument:
 *
 *     #include "frun_plugin.h"
 *     FRUN_PLUGIN_USES_CTX;
 *     int FN(int argc, char **argv, const struct frun_ctx *ctx);
 *
 * The context is append-only: fields are only ever added at the end, and `size` says how many
 * bytes of it this frun filled; check it before reading a field added after version 1
 * (FRUN_CTX_HAS(ctx, field)). Plugins written for forkrun (forkrun_use_ctx = 1, its struct
 * forkrun_ctx) run unchanged: frun fills that layout for them instead.
 */
#ifndef FRUN_PLUGIN_H
#define FRUN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define FRUN_CTX_VERSION 1

/* Define in exactly one file of the library to receive a struct frun_ctx. */
#define FRUN_PLUGIN_USES_CTX int frun_use_ctx = 1

struct frun_ctx {
    uint32_t size;          /* bytes of this struct that frun filled */
    uint32_t version;       /* FRUN_CTX_VERSION when this header was written: 1 */
    uint64_t batch_index;   /* the batch's place in input order: 0, 1, 2, ... (unique) */
    uint64_t input_offset;  /* where the batch starts in the input, in bytes */
    uint64_t batch_bytes;   /* the batch's length in bytes (delimiters included) */
    uint64_t records;       /* records in the batch (with -s: 0 when frun did not count them) */
    uint64_t spool_offset;  /* where the batch's bytes are in fd_in (pread(fd_in, ..., this)) */
    uint32_t worker_id;     /* the worker running it: 0 .. workers-1 */
    uint32_t node_id;       /* the NUMA node (logical with --nodes @N) the worker runs on */
    uint32_t attempt;       /* earlier attempts at this batch: 0 on the first */
    uint32_t incarnation;   /* this worker's plugin host: 1 for the first, +1 after each lost */
    int32_t fd_in;          /* read-only descriptor of the input as frun holds it */
    int32_t fd_out;         /* the batch's output (stdout: 1) */
    uint8_t delimiter;      /* the record delimiter ('\n', or 0 with -z) */
    uint8_t stdin_mode;     /* 1 with -s: the records are on stdin, not in argv */
    uint8_t reserved[6];
};

/* Whether this frun filled `field` of *ctx (for fields added after version 1). */
#define FRUN_CTX_HAS(ctx, field) \
    ((ctx)->size >= offsetof(struct frun_ctx, field) + sizeof((ctx)->field))

#endif /* FRUN_PLUGIN_H */
