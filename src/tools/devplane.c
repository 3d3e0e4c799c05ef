/* SPDX-License-Identifier: Apache-2.0
 * devplane — one binary, one subcommand per cmd-*.c file. */
#include <stdio.h>
#include <sys/stat.h>

#include "base/macros.h"
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

static void usage(FILE *f) {
        fprintf(f, "usage: devplane COMMAND [ARGS...]\n\n"
                   "Kubernetes device resources, both generations (Device Plugin and DRA).\n\ncommands:\n");
        for (size_t i = 0; i < n_commands; i++) fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
        fprintf(f, "\n`devplane COMMAND --help` describes a command.\n");
}

int main(int argc, char **argv) {
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "help")) {
                usage(stdout);
                return 0;
        }
        if (streq(argv[1], "--version")) {
                printf("devplane %s\n", DP_VERSION);
                return 0;
        }
        for (size_t i = 0; i < n_commands; i++)
                if (streq(commands[i]->name, argv[1])) return commands[i]->run(argc - 1, argv + 1);
        fprintf(stderr, "devplane: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
}
