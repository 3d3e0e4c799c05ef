/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "tools/devplane.h"

static int cmd_version(int argc, char **argv) {
        (void)argc;
        (void)argv;
        printf("devplane %s\n", DP_VERSION);
        return 0;
}
DP_COMMAND("version", cmd_version, "print the version")
