/* SPDX-License-Identifier: Apache-2.0
 * devplane.h — the command table shared by the thin front-end files.
 * Each cmd-*.c defines one `int dp_cmd_<name>(int argc, char **argv)`
 * (argv[0] is the subcommand name) returning the process exit status:
 * 0 success, 1 "did not work out" (e.g. a claim could not be allocated),
 * 2 usage or input error, 3 out of memory (DP_EXIT_NO_MEMORY). */
#pragma once

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#define DP_EXIT_NO_MEMORY 3

typedef struct dp_alloc_cluster_options dp_alloc_cluster_options;

/* Print "devplane CMD: out of memory while WHAT; input: N file(s), B bytes"
 * (what: NULL for "loading the input") and return DP_EXIT_NO_MEMORY. */
int dp_tool_out_of_memory(const char *cmd, const char *what, const char *const *paths, size_t n_paths);

/* Print "devplane CMD: MSG HINT" on stderr, MSG with its controls, bidi
 * controls and bytes that are not UTF-8 escaped (base/escape.h): messages
 * quote names and API-server answers, which are input. */
void dp_tool_print_error(const char *cmd, const char *msg, const char *hint);

/* A release build leaves what a command built (the decoded input, the runs)
 * to the end of the process rather than freeing it piece by piece; debug and
 * sanitizer builds (the tests) free everything, so leak checks still see
 * every allocation. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DP_TOOL_BUILD_ASAN 1
#endif
#endif
#if defined(NDEBUG) && !defined(DP_TOOL_BUILD_ASAN) && !defined(__SANITIZE_ADDRESS__)
#define DP_TOOL_EXIT_WITHOUT_FREEING 1
#else
#define DP_TOOL_EXIT_WITHOUT_FREEING 0
#endif

/* Option parsing, the shapes the subcommands share. Each prints its own
 * message and leaves the exit status (2 for usage) to the caller. */

/* getopt_long over argv from its start, for a subcommand whose options are
 * -h/--help and --NAME VALUE (its short form in shortopts, e.g. "n:h"): the
 * value goes to *ret_value. Returns -1 when argv is parsed (optind at the
 * first operand), else the exit status: 0 after --help (usage on stdout), 2
 * after an option getopt refused (usage on stderr). */
int dp_tool_getopt_one(int argc, char **argv, const char *shortopts, const char *name, void (*usage)(FILE *f),
                       const char **ret_value);

/* One of the words an option takes (-o yaml), and what it stands for. */
typedef struct dp_tool_word {
        const char *word;
        int value;
} dp_tool_word;

/* The value (>= 0) of arg among words (ended by {NULL}); a word not there
 * prints "devplane CMD: OPT ARG: must be EXPECTED" and gives -EINVAL. */
int dp_tool_word_value(const char *cmd, const char *opt, const char *arg, const dp_tool_word *words,
                       const char *expected);

/* --feature-gates ARG into opts (dp_alloc_parse_feature_gate); an unknown
 * gate prints "devplane CMD: --feature-gates ARG: known: ..." and gives -EINVAL. */
int dp_tool_feature_gate(const char *cmd, const char *arg, dp_alloc_cluster_options *opts);

typedef struct dp_command {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
} dp_command;

/* Each cmd-*.c registers itself with DP_COMMAND, so adding a subcommand
 * touches only its own file. */
void dp_command_register(const dp_command *c);
#define DP_COMMAND(n, fn, text)                                                        \
        __attribute__((constructor)) static void dp_register_cmd_##fn(void) {         \
                static const dp_command c = {n, fn, text};                             \
                dp_command_register(&c);                                               \
        }
