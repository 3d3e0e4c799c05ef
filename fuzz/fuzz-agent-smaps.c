/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the resident-memory trim's /proc/self/smaps reader (agent/rss.c,
 * agent_smaps_line): the input is split into lines as the trim splits them;
 * every range it returns must come from a header line it was given: start
 * below end, within what was printed, with a resident size. Nothing is
 * dropped here (the reader is pure). */
#include "agent/agent-internal.h"

#define CHECK(x)                                                                                                       \
        do {                                                                                                           \
                if (!(x)) abort();                                                                                     \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 65536) return 0;
        char *text = malloc(size + 1);
        if (!text) return 0;
        memcpy(text, data, size);
        text[size] = 0;
        agent_smaps s;
        agent_smaps_init(&s);
        for (char *line = text, *end = text + size; line <= end;) {
                char *nl = memchr(line, '\n', (size_t)(end - line));
                if (nl) *nl = 0;
                uint64_t start = 0, len = 0, kib = 0;
                if (agent_smaps_line(&s, line, &start, &len, &kib)) {
                        CHECK(len > 0 && start + len > start);
                        CHECK(kib > 0 && kib != UINT64_MAX);
                        CHECK(!s.candidate); /* one range per header */
                }
                if (!nl) break;
                line = nl + 1;
        }
        free(text);
        return 0;
}
