/* SPDX-License-Identifier: Apache-2.0
 * The agent's resident-memory trim: after start-up, once registered and
 * again after each burst of calls, the pages of the executable and of the
 * shared libraries that the agent touched are unmapped (MADV_DONTNEED) and
 * free heap is returned (malloc_trim). Most of an idle agent's VmRSS is
 * those pages; its own data is about 0.3 MiB (docs/benchmarks.md, "Agent
 * resident memory: dropping start-up's file pages").
 *
 * Which mappings: read-only, private, backed by a file outside /dev (not a
 * memfd), with no anonymous page (a page written once, as the dynamic linker
 * writes relocations into RELRO before making it read-only, is anonymous:
 * dropping it would lose the write), and not VM_IO/VM_PFNMAP, locked, hugetlb
 * or under userfaultfd. Private_Dirty is no criterion: it also counts page-
 * cache pages not yet written back (a binary just built). Such pages are
 * clean copies of the page cache; the next access faults them in again from
 * it, so dropping them is invisible to the program but for the time of those
 * faults -- the kernel does the same to them under memory pressure.
 * /proc/self/smaps says all of this per mapping; it is read through a fixed
 * buffer on the stack, so the trim allocates nothing.
 *
 * The ranges are dropped right after the scan, on the loop's thread. Only the
 * loop maps or unmaps files (dlopen/dlclose happen on it); the API client's
 * decoding thread (kube/offload.c) maps and unmaps anonymous memory only,
 * through malloc, and cannot place it over a file range that is still mapped,
 * so a file range cannot change between the scan and its madvise. */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/mman.h>

#include "agent/agent-internal.h"
#include "base/log.h"

#define RSS_TRIM_MAX_MS (24u * 3600 * 1000)
#define SMAPS_BUF 8192

int dp_agent_rss_trim_parse(const char *value, unsigned *ret_ms, dp_error *err) {
        assert_return(ret_ms, -EINVAL);
        if (!value || !*value) {
                *ret_ms = DP_AGENT_RSS_TRIM_DEFAULT_MS;
                return 0;
        }
        unsigned long v = 0;
        for (const char *c = value; *c; c++) {
                if (*c < '0' || *c > '9' || v > RSS_TRIM_MAX_MS)
                        return dp_error_set(err, -EINVAL,
                                            "DP_AGENT_RSS_TRIM=\"%s\": must be 0 (off) or milliseconds from 1 to %u",
                                            value, RSS_TRIM_MAX_MS);
                v = v * 10 + (unsigned long)(*c - '0');
        }
        if (v > RSS_TRIM_MAX_MS)
                return dp_error_set(err, -EINVAL,
                                    "DP_AGENT_RSS_TRIM=\"%s\": must be 0 (off) or milliseconds from 1 to %u", value,
                                    RSS_TRIM_MAX_MS);
        *ret_ms = (unsigned)v;
        return 0;
}

/* ---- /proc/self/smaps, one line at a time ------------------------------------ */

void agent_smaps_init(agent_smaps *s) { *s = (agent_smaps){0}; }

static bool parse_hex(const char **p, uint64_t *ret) {
        uint64_t v = 0;
        const char *c = *p;
        if (!isxdigit((unsigned char)*c)) return false;
        for (; isxdigit((unsigned char)*c); c++) {
                if (v >> 60) return false;
                v = v * 16 +
                    (uint64_t)(isdigit((unsigned char)*c) ? *c - '0' : (tolower((unsigned char)*c) - 'a' + 10));
        }
        *p = c;
        *ret = v;
        return true;
}

static const char *skip_field(const char *c) {
        while (*c && *c != ' ')
                c++;
        while (*c == ' ')
                c++;
        return c;
}

/* "start-end perms offset dev inode [path]" */
static void header(agent_smaps *s, const char *line) {
        const char *c = line;
        uint64_t start = 0, end = 0;
        s->candidate = false;
        s->rss_kib = s->anon_kib = UINT64_MAX;
        if (!parse_hex(&c, &start) || *c++ != '-' || !parse_hex(&c, &end) || *c++ != ' ' || end <= start) return;
        const char *perms = c;
        if (strlen(perms) < 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p') return;
        c = skip_field(skip_field(skip_field(c)));         /* past perms, offset, dev: the inode */
        if (c[0] == '0' && (c[1] == ' ' || !c[1])) return; /* inode 0: anonymous */
        c = skip_field(c);                                 /* the path */
        if (*c != '/' || startswith(c, "/dev/") || startswith(c, "/memfd:")) return;
        s->start = start;
        s->end = end;
        s->candidate = true;
}

static bool kib_field(const char *line, const char *key, uint64_t *ret) {
        if (!startswith(line, key)) return false;
        const char *c = line + strlen(key);
        while (*c == ' ')
                c++;
        uint64_t v = 0;
        if (!isdigit((unsigned char)*c)) return true; /* malformed: stays UINT64_MAX */
        for (; isdigit((unsigned char)*c) && v < UINT64_MAX / 10; c++)
                v = v * 10 + (uint64_t)(*c - '0');
        *ret = v;
        return true;
}

/* VmFlags of a mapping whose pages cannot simply be faulted in again. */
static bool flags_ok(const char *flags) {
        static const char *const bad[] = {"wr", "sh", "io", "pf", "lo", "ht", "um", "uw", "dc"};
        for (const char *c = flags; *c;) {
                while (*c == ' ')
                        c++;
                if (!c[0] || !c[1]) break;
                for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                        if (c[0] == bad[i][0] && c[1] == bad[i][1] && (c[2] == ' ' || c[2] == 0 || c[2] == '\n'))
                                return false;
                c = skip_field(c);
        }
        return true;
}

bool agent_smaps_line(agent_smaps *s, const char *line, uint64_t *ret_start, uint64_t *ret_len, uint64_t *ret_rss_kib) {
        const char *c = line;
        uint64_t ignored;
        if (parse_hex(&c, &ignored) && *c == '-') { /* a mapping's first line */
                header(s, line);
                return false;
        }
        if (!s->candidate) return false;
        if (kib_field(line, "Rss:", &s->rss_kib) || kib_field(line, "Anonymous:", &s->anon_kib)) return false;
        if (!startswith(line, "VmFlags:")) return false;
        /* VmFlags is the last line of a mapping's block: decide. */
        s->candidate = false;
        if (s->anon_kib != 0 || s->rss_kib == 0 || s->rss_kib == UINT64_MAX || !flags_ok(line + strlen("VmFlags:")))
                return false;
        *ret_start = s->start;
        *ret_len = s->end - s->start;
        *ret_rss_kib = s->rss_kib;
        return true;
}

/* ---- the trim ------------------------------------------------------------------ */

/* Ranges to drop, gathered while smaps is read and dropped after the log
 * line is written (so the code that logs is dropped too); a full batch is
 * dropped at once. */
#define TRIM_BATCH 128
typedef struct trim_batch {
        struct {
                uint64_t start, len;
        } r[TRIM_BATCH];
        size_t n;
        uint64_t kib;
        unsigned maps;
} trim_batch;

static void batch_flush(trim_batch *b) {
        for (size_t i = 0; i < b->n; i++)
                (void)madvise((void *)(uintptr_t)b->r[i].start, b->r[i].len, MADV_DONTNEED);
        b->n = 0;
}

/* Read /proc/self/smaps through buf and gather each mapping that qualifies.
 * A line longer than the buffer (a path near PATH_MAX) makes its mapping
 * "not a candidate". */
static int scan_smaps(trim_batch *b) {
        int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -errno;
        char buf[SMAPS_BUF];
        size_t have = 0;
        bool skipping = false; /* inside an over-long line */
        agent_smaps s;
        agent_smaps_init(&s);
        int r = 0;
        for (;;) {
                ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (n == 0) break;
                have += (size_t)n;
                buf[have] = 0;
                char *line = buf;
                for (char *nl; (nl = memchr(line, '\n', have - (size_t)(line - buf)));) {
                        *nl = 0;
                        uint64_t start = 0, len = 0, rss = 0;
                        if (skipping)
                                skipping = false;
                        else if (agent_smaps_line(&s, line, &start, &len, &rss)) {
                                if (b->n == TRIM_BATCH) batch_flush(b);
                                b->r[b->n].start = start;
                                b->r[b->n].len = len;
                                b->n++;
                                b->kib += rss;
                                b->maps++;
                        }
                        line = nl + 1;
                }
                have -= (size_t)(line - buf);
                memmove(buf, line, have);
                if (have == sizeof buf - 1) { /* one line fills the buffer */
                        s.candidate = false;
                        skipping = true;
                        have = 0;
                }
        }
        close(fd);
        return r;
}

void agent_rss_trim_now(agent_rss *t) {
        uint64_t t0 = dp_loop_now();
        trim_batch b;
        b.n = 0;
        b.kib = 0;
        b.maps = 0;
        int r = scan_smaps(&b);
        malloc_trim(0);
        t->trims++;
        t->last_kib = b.kib;
        uint64_t usec = dp_loop_now() - t0;
        if (r < 0)
                log_warning("rss trim: /proc/self/smaps: %s; only free heap returned", strerror(-r));
        else if (t->trims == 1)
                log_info("rss trim 1: dropping %" PRIu64 " KiB of start-up's file pages (%u mappings, scan %" PRIu64
                         " us); again after %u ms without calls (DP_AGENT_RSS_TRIM)",
                         b.kib, b.maps, usec, (unsigned)(t->period_usec / 1000));
        else
                log_debug("rss trim %u: dropping %" PRIu64 " KiB of file pages (%u mappings, scan %" PRIu64 " us)",
                          t->trims, b.kib, b.maps, usec);
        batch_flush(&b);
}

static int on_trim_timer(dp_loop_source *src, uint64_t now, void *ud) {
        agent_rss *t = ud;
        if (t->activity != t->seen) { /* calls since it was armed: wait for a quiet period */
                t->seen = t->activity;
                dp_loop_source_set_time(src, now + t->period_usec);
                return 0;
        }
        t->armed = false;
        agent_rss_trim_now(t);
        return 0;
}

int agent_rss_init(agent_rss *t, dp_loop *l, unsigned ms) {
        *t = (agent_rss){.period_usec = (uint64_t)ms * 1000};
        if (!ms) {
                log_debug("rss trim: off (DP_AGENT_RSS_TRIM=0)");
                return 0;
        }
        log_debug("rss trim: %u ms after start-up and after the last call of a burst", ms);
        return dp_loop_add_timer(l, 0, on_trim_timer, t, &t->timer);
}

void agent_rss_done(agent_rss *t) {
        t->timer = dp_loop_source_free(t->timer);
        t->period_usec = 0;
}

void agent_rss_arm(agent_rss *t) {
        if (!t->timer) return;
        t->seen = t->activity;
        if (dp_loop_source_set_time(t->timer, dp_loop_now() + t->period_usec) == 0) t->armed = true;
}
