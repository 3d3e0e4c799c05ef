/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/agent/rss.c: which mappings of /proc/self/smaps the
 * resident-memory trim may drop (only clean read-only private file pages:
 * never RELRO pages the dynamic linker wrote, writable, anonymous, device or
 * special mappings), the DP_AGENT_RSS_TRIM values, and a trim of this very
 * process that leaves its code and libc working. */
#include <fcntl.h>
#include <stdio.h>

#include "harness.h"

#include "agent/agent-internal.h"

/* One mapping's block as the kernel prints it (fields the reader ignores
 * included). */
static const char *block(char *buf, size_t size, const char *header, unsigned rss, unsigned dirty, unsigned anon,
                         const char *flags) {
        snprintf(buf, size,
                 "%s\nSize:                 64 kB\nKernelPageSize:        4 kB\nMMUPageSize:           4 kB\n"
                 "Rss:                 %u kB\nPss:                 %u kB\nPss_Dirty:             0 kB\n"
                 "Shared_Clean:          0 kB\nShared_Dirty:          0 kB\nPrivate_Clean:       %u kB\n"
                 "Private_Dirty:       %u kB\nReferenced:          %u kB\nAnonymous:           %u kB\n"
                 "KSM:                   0 kB\nLazyFree:              0 kB\nAnonHugePages:         0 kB\n"
                 "FilePmdMapped:         0 kB\nSwap:                  0 kB\nSwapPss:               0 kB\n"
                 "Locked:                0 kB\nTHPeligible:           0\nVmFlags: %s\n",
                 header, rss, rss, rss - dirty, dirty, rss, anon, flags);
        return buf;
}

/* Feed a block line by line; the range it yields (len 0: none). */
static uint64_t feed(agent_smaps *s, const char *text, uint64_t *ret_start, uint64_t *ret_kib) {
        char copy[4096];
        snprintf(copy, sizeof copy, "%s", text);
        uint64_t len = 0, found = 0;
        for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                uint64_t st = 0, l = 0, kib = 0;
                if (agent_smaps_line(s, line, &st, &l, &kib)) {
                        ASSERT_EQ(found, 0); /* at most one per block */
                        found = 1;
                        len = l;
                        *ret_start = st;
                        *ret_kib = kib;
                }
        }
        return len;
}

static uint64_t one(const char *header, unsigned rss, unsigned dirty, unsigned anon, const char *flags) {
        char buf[2048];
        agent_smaps s;
        agent_smaps_init(&s);
        uint64_t start = 0, kib = 0;
        return feed(&s, block(buf, sizeof buf, header, rss, dirty, anon, flags), &start, &kib);
}

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

TEST(smaps_selection) {
        /* code and rodata of a library and of the executable: dropped */
        ASSERT_EQ(one("7f3b322ce000-7f3b32424000 r-xp 00026000 fe:00 332835                     " LIBC, 1032, 0, 0,
                      "rd ex mr mw me "),
                  0x7f3b32424000ull - 0x7f3b322ce000ull);
        ASSERT_EQ(one("7f3b322a8000-7f3b322ce000 r--p 00000000 fe:00 332835   " LIBC, 148, 0, 0, "rd mr mw me"),
                  0x26000);
        /* the executable just built: its page-cache pages are still dirty
         * (Private_Dirty), none is anonymous: dropped (they stay cached) */
        ASSERT_EQ(one("559c99c66000-559c99d53000 r-xp 00013000 fe:00 5343978    /build/devplane", 340, 340, 0,
                      "rd ex mr mw me "),
                  0xed000);
        /* RELRO: read-only now, but written by the dynamic linker */
        ASSERT_EQ(one("7f3b32477000-7f3b3247b000 r--p 001cf000 fe:00 332835  " LIBC, 16, 16, 16, "rd mr mw me ac "), 0);
        /* writable, shared, anonymous, special, device, memfd */
        ASSERT_EQ(one("7f3b3247b000-7f3b3247d000 rw-p 001d3000 fe:00 332835  " LIBC, 8, 8, 8, "rd wr mr mw me ac "), 0);
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--s 00000000 fe:00 1234  /var/cache/x", 64, 0, 0, "rd mr me sh "), 0);
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--p 00000000 00:00 0 ", 64, 0, 0, "rd mr mw me "), 0);
        ASSERT_EQ(one("7ffd1b7f0000-7ffd1b7f4000 r--p 00000000 00:00 0                          [vvar]", 16, 0, 0,
                      "rd mr pf io de dd "),
                  0);
        ASSERT_EQ(one("7ffd1b7f4000-7ffd1b7f6000 r-xp 00000000 00:00 0                          [vdso]", 8, 0, 0,
                      "rd ex mr mw me de "),
                  0);
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--p 00000000 00:05 77  /dev/nvidiactl", 64, 0, 0, "rd mr mw me "), 0);
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--p 00000000 00:01 9  /memfd:x (deleted)", 64, 0, 0, "rd mr me "), 0);
        /* a file mapping the kernel marks io/pfnmap, locked, hugetlb */
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--p 00000000 fe:00 9  /opt/lib/x.so", 64, 0, 0, "rd mr io pf "), 0);
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--p 00000000 fe:00 9  /opt/lib/x.so", 64, 0, 0, "rd mr mw me lo "),
                  0);
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--p 00000000 fe:00 9  /opt/lib/x.so", 64, 0, 0, "rd mr ht "), 0);
        /* nothing resident: nothing to do */
        ASSERT_EQ(one("7f0000000000-7f0000010000 r--p 00000000 fe:00 9  /opt/lib/x.so", 0, 0, 0, "rd mr mw me "), 0);
        /* malformed headers and fields */
        ASSERT_EQ(one("7f0000010000-7f0000000000 r--p 00000000 fe:00 9  /opt/lib/x.so", 64, 0, 0, "rd mr "), 0);
        ASSERT_EQ(one("zz-7f0000000000 r--p 00000000 fe:00 9  /opt/lib/x.so", 64, 0, 0, "rd mr "), 0);
        ASSERT_EQ(one("7f0000000000-7f0000010000 r-", 64, 0, 0, "rd mr "), 0);
}

TEST(smaps_sequence) {
        /* Blocks one after another: a RELRO block between two that qualify
         * yields the two, each with its own range and KiB. */
        char a[2048], b[2048], c[2048], all[8192];
        snprintf(all, sizeof all, "%s%s%s",
                 block(a, sizeof a, "1000-3000 r-xp 00000000 fe:00 5  /x/lib.so", 8, 0, 0, "rd ex mr mw me"),
                 block(b, sizeof b, "3000-4000 r--p 00002000 fe:00 5  /x/lib.so", 4, 4, 4, "rd mr mw me ac"),
                 block(c, sizeof c, "5000-6000 r--p 00003000 fe:00 5  /x/lib.so", 4, 0, 0, "rd mr mw me"));
        agent_smaps s;
        agent_smaps_init(&s);
        uint64_t got[4][3];
        size_t n = 0;
        for (char *save = NULL, *line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                uint64_t st = 0, l = 0, kib = 0;
                if (agent_smaps_line(&s, line, &st, &l, &kib)) {
                        ASSERT_TRUE(n < 4);
                        got[n][0] = st;
                        got[n][1] = l;
                        got[n][2] = kib;
                        n++;
                }
        }
        ASSERT_EQ(n, 2);
        ASSERT_EQ(got[0][0], 0x1000);
        ASSERT_EQ(got[0][1], 0x2000);
        ASSERT_EQ(got[0][2], 8);
        ASSERT_EQ(got[1][0], 0x5000);
        ASSERT_EQ(got[1][1], 0x1000);
        ASSERT_EQ(got[1][2], 4);
        /* a block whose VmFlags line never came is not acted on by the next */
        agent_smaps_init(&s);
        uint64_t st = 0, l = 0, kib = 0;
        ASSERT_FALSE(agent_smaps_line(&s, "1000-3000 r-xp 00000000 fe:00 5  /x/lib.so", &st, &l, &kib));
        ASSERT_FALSE(agent_smaps_line(&s, "Rss:  8 kB", &st, &l, &kib));
        ASSERT_FALSE(agent_smaps_line(&s, "Anonymous:  0 kB", &st, &l, &kib));
        ASSERT_FALSE(agent_smaps_line(&s, "3000-4000 rw-p 00000000 fe:00 5  /x/lib.so", &st, &l, &kib));
        ASSERT_FALSE(agent_smaps_line(&s, "VmFlags: rd mr", &st, &l, &kib));
}

TEST(trim_env) {
        unsigned ms = 7;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_agent_rss_trim_parse(NULL, &ms, &e));
        ASSERT_EQ(ms, DP_AGENT_RSS_TRIM_DEFAULT_MS);
        ASSERT_OK(dp_agent_rss_trim_parse("", &ms, &e));
        ASSERT_EQ(ms, DP_AGENT_RSS_TRIM_DEFAULT_MS);
        ASSERT_OK(dp_agent_rss_trim_parse("0", &ms, &e));
        ASSERT_EQ(ms, 0);
        ASSERT_OK(dp_agent_rss_trim_parse("20", &ms, &e));
        ASSERT_EQ(ms, 20);
        ASSERT_OK(dp_agent_rss_trim_parse("86400000", &ms, &e));
        ASSERT_EQ(ms, 86400000);
        static const char *const bad[] = {"-1", "1.5", "10ms", " 5", "off", "86400001", "99999999999999999999999"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ms = 7;
                dp_error be = DP_ERROR_INIT;
                ASSERT_EQ(dp_agent_rss_trim_parse(bad[i], &ms, &be), -EINVAL);
                ASSERT_EQ(ms, 7);
                ASSERT_CONTAINS(be.msg, "DP_AGENT_RSS_TRIM");
        }
}

/* 1 MiB of read-only data of this executable (not all zero: .rodata,
 * file-backed). */
#define BIG_PAGES 256
static const unsigned char big[BIG_PAGES * 4096] = {1, 2, 3};

/* How many of the pages of big from..to (whole pages only) are mapped in
 * (/proc/self/pagemap bit 63). */
static size_t big_present(size_t from, size_t to) {
        int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        long ps = sysconf(_SC_PAGESIZE);
        uintptr_t first = ((uintptr_t)big + (uintptr_t)ps - 1) / (uintptr_t)ps;
        size_t n = 0;
        for (size_t i = from; i < to; i++) {
                uint64_t e = 0;
                ASSERT_EQ(pread(fd, &e, sizeof e, (off_t)((first + i) * sizeof e)), (ssize_t)sizeof e);
                n += (size_t)(e >> 63);
        }
        close(fd);
        return n;
}

static unsigned big_sum(void) {
        const volatile unsigned char *p = big;
        unsigned sum = 0;
        for (size_t i = 0; i < sizeof big; i += 512)
                sum += p[i] + p[i + 1] + p[i + 2];
        return sum;
}

static int twice(int x) { return 2 * x; }

/* Trim this process (its code, libc, the sanitizer runtime when there is
 * one) and go on running: the read-only data is unmapped, then faulted in
 * again with its contents; code and heap work. */
TEST(trim_self) {
        ASSERT_EQ(big_sum(), 6);
        ASSERT_EQ(big_present(0, BIG_PAGES - 1), BIG_PAGES - 1);
        agent_rss t;
        agent_rss_init(&t, NULL, 0);
        agent_rss_trim_now(&t);
        ASSERT_EQ(t.trims, 1);
        ASSERT_TRUE(t.last_kib >= (BIG_PAGES - 1) * 4);
        /* A fault maps the cached pages around it (fault-around, 64 KiB):
         * other constants beside big may bring its first and last pages
         * back; the pages in between only big's own reads would. */
        ASSERT_EQ(big_present(32, BIG_PAGES - 32), 0);
        ASSERT_EQ(big_sum(), 6);
        ASSERT_EQ(big_present(0, BIG_PAGES - 1), BIG_PAGES - 1);
        char buf[64];
        snprintf(buf, sizeof buf, "%s %d", "still", twice(21));
        ASSERT_STREQ(buf, "still 42");
        char *p = strdup("heap");
        ASSERT_TRUE(p && streq(p, "heap"));
        free(p);
}
