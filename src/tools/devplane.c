/* SPDX-License-Identifier: Apache-2.0
 * devplane — one binary, one subcommand per cmd-*.c file. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/adapter.h"
#include "base/escape.h"
#include "base/macros.h"
#include "base/strbuf.h"
#include "tools/devplane.h"

#define MAX_COMMANDS 32
static const dp_command *commands[MAX_COMMANDS];
static size_t n_commands;

void dp_command_register(const dp_command *c) {
        assert(n_commands < MAX_COMMANDS);
        /* keep sorted by name so help output is stable */
        size_t i = n_commands++;
        while (i > 0 && strcmp(commands[i - 1]->name, c->name) > 0) {
                commands[i] = commands[i - 1];
                i--;
        }
        commands[i] = c;
}

void dp_tool_print_error(const char *cmd, const char *msg, const char *hint) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_escape_append(&sb, msg, strlen(msg), 0);
        _cleanup_free_ char *m = dp_strbuf_steal(&sb);
        fprintf(stderr, "devplane %s: %s%s\n", cmd, m ? m : "(out of memory)", hint ? hint : "");
}

int dp_tool_out_of_memory(const char *cmd, const char *what, const char *const *paths, size_t n_paths) {
        unsigned long long bytes = 0;
        for (size_t i = 0; i < n_paths; i++) {
                struct stat st;
                if (paths[i] && stat(paths[i], &st) == 0 && S_ISREG(st.st_mode)) bytes += (unsigned long long)st.st_size;
        }
        fprintf(stderr, "devplane %s: out of memory while %s; input: %zu file(s), %llu bytes\n", cmd,
                what && what[0] ? what : "loading the input", n_paths, bytes);
        return DP_EXIT_NO_MEMORY;
}

int dp_tool_getopt_one(int argc, char **argv, const char *shortopts, const char *name, void (*usage)(FILE *f),
                       const char **ret_value) {
        const struct option opts[] = {
                {name, required_argument, NULL, 0x100}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) >= 0) {
                if (c == 'h') {
                        usage(stdout);
                        return 0;
                }
                if (c == '?' || c == ':') {
                        usage(stderr);
                        return 2;
                }
                *ret_value = optarg;
        }
        return -1;
}

int dp_tool_word_value(const char *cmd, const char *opt, const char *arg, const dp_tool_word *words,
                       const char *expected) {
        for (const dp_tool_word *w = words; w->word; w++)
                if (streq(arg, w->word)) return w->value;
        fprintf(stderr, "devplane %s: %s %s: must be %s\n", cmd, opt, arg, expected);
        return -EINVAL;
}

int dp_tool_feature_gate(const char *cmd, const char *arg, dp_alloc_cluster_options *opts) {
        if (dp_alloc_parse_feature_gate(arg, opts) >= 0) return 0;
        fprintf(stderr, "devplane %s: --feature-gates %s: known: %s\n", cmd, arg, DP_ALLOC_FEATURE_GATES);
        return -EINVAL;
}

static void usage(FILE *f) {
        fprintf(f, "usage: devplane COMMAND [ARGS...]\n\n"
                   "Kubernetes device resources, both generations (Device Plugin and DRA).\n\ncommands:\n");
        for (size_t i = 0; i < n_commands; i++) fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
        fprintf(f, "\n`devplane help COMMAND` (or `devplane COMMAND --help`) describes a command.\n");
}

static const dp_command *find_command(const char *name) {
        for (size_t i = 0; i < n_commands; i++)
                if (streq(commands[i]->name, name)) return commands[i];
        return NULL;
}

/* Optimal string alignment distance (a swap of two neighbours counts one),
 * for "did you mean": names are short, so the table is on the stack and
 * longer input is simply "far". */
#define SUGGEST_MAX_LEN 32
static size_t name_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN) return SIZE_MAX;
        size_t d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
        for (size_t i = 0; i <= la; i++) d[i][0] = i;
        for (size_t j = 0; j <= lb; j++) d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
                        if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                                best = d[i - 2][j - 2] + 1;
                        d[i][j] = best;
                }
        return d[la][lb];
}

/* "unknown command" with kubectl's hint: the commands within two edits, or
 * the ones the word is a prefix of. */
static int unknown_command(const char *name) {
        fprintf(stderr, "devplane: unknown command '%s'\n", name);
        bool any = false;
        for (size_t i = 0; i < n_commands; i++) {
                const char *c = commands[i]->name;
                if (name_distance(name, c) <= 2 || (strlen(name) >= 2 && startswith(c, name))) {
                        fprintf(stderr, "%s  %s\n", any ? "" : "\nDid you mean this?\n", c);
                        any = true;
                }
        }
        fprintf(stderr, "\nRun 'devplane --help' for the commands.\n");
        return 2;
}

/* devplane help [COMMAND]: the command's own --help, on stdout. */
static int help(int argc, char **argv) {
        if (argc < 3) {
                usage(stdout);
                return 0;
        }
        const dp_command *c = find_command(argv[2]);
        if (!c) return unknown_command(argv[2]);
        char *args[] = {argv[2], (char *)"--help", NULL};
        return c->run(2, args);
}

int main(int argc, char **argv) {
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (streq(argv[1], "--help") || streq(argv[1], "-h")) {
                usage(stdout);
                return 0;
        }
        if (streq(argv[1], "help")) return help(argc, argv);
        if (streq(argv[1], "--version")) {
                printf("devplane %s\n", DP_VERSION);
                return 0;
        }
        const dp_command *c = find_command(argv[1]);
        if (c) return c->run(argc - 1, argv + 1);
        return unknown_command(argv[1]);
}
