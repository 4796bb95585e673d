/* The one thing Rust cannot do for the bash front end: catch a jump to the shell's top level.
 *
 * `exit` in a function, `set -e`, or a fatal expansion error make bash longjmp to `top_level`.
 * In a worker shell that would land in the user's copied read loop (and run its exit code: the
 * EXIT trap, history saving). Every call into shell code goes through frun_call, which points
 * top_level at itself first, so such a jump comes back here and the worker can end cleanly.
 * Nothing else belongs in this file. */

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

/* From bash (exported by the bash binary). */
extern sigjmp_buf top_level;
extern int last_command_exit_value;
extern int execute_shell_function(void *var, void *words);
extern int evalstring(char *string, const char *from_file, int flags);

typedef int frun_builtin_fn(void *words);

/* evalstring flags: SEVAL_NOHIST | SEVAL_NOFREE. */
#define FRUN_SEVAL_FLAGS 0x00c

enum { FRUN_FUNCTION = 0, FRUN_BUILTIN = 1, FRUN_STRING = 2 };

/* Runs a function (target = SHELL_VAR*, words include its name), a builtin (target = its
 * function, words are the arguments) or a string of shell code (text). Stores the status and
 * returns 0; returns 1 when the shell jumped to its top level (status = the exit status). */
int frun_call(int kind, void *target, void *words, char *text, int *status)
{
    sigjmp_buf saved;
    memcpy(saved, top_level, sizeof saved);
    if (sigsetjmp(top_level, 0)) {
        memcpy(top_level, saved, sizeof saved);
        *status = last_command_exit_value;
        return 1;
    }
    switch (kind) {
    case FRUN_FUNCTION:
        *status = execute_shell_function(target, words);
        break;
    case FRUN_BUILTIN:
        *status = ((frun_builtin_fn *)target)(words);
        break;
    default:
        *status = evalstring(text, "frun", FRUN_SEVAL_FLAGS);
        break;
    }
    memcpy(top_level, saved, sizeof saved);
    return 0;
}

/* Writes out what the shell's stdio buffers hold (before a fork, after a batch). */
void frun_flush_stdio(void)
{
    fflush(stdout);
    fflush(stderr);
}
