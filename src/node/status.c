/* SPDX-License-Identifier: Apache-2.0 */
#include <poll.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <time.h>

#include "base/fileio.h"
#include "base/table.h"
#include "node/ckpt.h"
#include "node/node.h"
#include "node/status.h"

int dp_node_status_read(const char *plugin_dir, dp_doc_set *s, dp_doc_node **ret, dp_error *err) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", plugin_dir, DP_NODE_STATUS_FILE);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        if (!path) return -ENOMEM;
        int r = dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, err);
        if (r < 0) return r;
        size_t before = dp_doc_count(s);
        r = dp_doc_parse(s, buf, len, path, err);
        if (r < 0) return r;
        if (dp_doc_count(s) == before || dp_doc_root(s, before)->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "%s: not a status document", path);
        *ret = dp_doc_root(s, before);
        return 0;
}

static const char *str_of(const dp_doc_node *m, const char *key) {
        const dp_doc_node *n = dp_doc_get(m, key);
        return n && n->type == DP_DOC_SCALAR ? n->str : "";
}

static const dp_doc_node *seq_of(const dp_doc_node *m, const char *key) {
        const dp_doc_node *n = dp_doc_get(m, key);
        return n && n->type == DP_DOC_SEQ ? n : NULL;
}

#define FOREACH_ITEM(it, seq)                                                                                          \
        for (size_t it##_i = 0; (seq) && it##_i < (seq)->n && ((it) = (seq)->items[it##_i], 1); it##_i++)

static void ids_joined(dp_strbuf *out, const dp_doc_node *ids) {
        const dp_doc_node *id;
        bool first = true;
        FOREACH_ITEM(id, ids) {
                if (!first) dp_strbuf_putc(out, ',');
                dp_strbuf_puts(out, id->type == DP_DOC_SCALAR ? id->str : "?");
                first = false;
        }
        if (first) dp_strbuf_putc(out, '-');
}

/* DRA manager lines (docs/v2-node-path.md):
 *   dra-plugin <driver> <state> endpoint=<path> version=<v>   (dra-plugin-error <socket> <why>)
 *   dra-pod <ns>/<name> phase=Prepared|Waiting attempts=<n>   (dra-pod-message <ns>/<name> <why>)
 *   dra-pod-claim <ns>/<name> <podClaimName>=<claim>  (status.resourceClaimStatuses; the
 *                 extended-resource claim as @extended-resources=<claim>)
 *   dra-claim <ns>/<name> uid=<uid> driver=<d> devices=<pool>/<dev>,... [skipped]
 *             state=prepared|preparing|unpreparing pods=<ns>/<pod>,...|-
 *   dra-state <origin> [rebuild]   (dra-state-error <why>; dra-state-unknown <driver> <why>)
 *   dra-cdi <ns>/<pod>/<ctr> <id>,...       dra-env <ns>/<pod>/<ctr> NAME=VALUE
 *   dra-ctr-health <ns>/<pod>/<ctr> claim:<claim>/<request> <driver>/<pool>/<device> <health>
 *   dra-health-stream <driver> <state>
 *   dra-health <driver> <pool>/<device> Healthy|Unhealthy|Unknown [<message>] */
/* A pod's claims, one "dra-pod-claim" line each (the extended-resource
 * claim included): the same for DRA pods and device-plugin pods. */
static void pod_claim_lines(dp_strbuf *o, const dp_doc_node *p) {
        const dp_doc_node *c;
        FOREACH_ITEM(c, seq_of(p, "resourceClaimStatuses"))
        dp_strbuf_printf(o, "dra-pod-claim %s/%s %s=%s\n", str_of(p, "namespace"), str_of(p, "name"), str_of(c, "name"),
                         str_of(c, "resourceClaimName"));
        if (dp_doc_get(p, "extendedResourceClaim"))
                dp_strbuf_printf(o, "dra-pod-claim %s/%s @extended-resources=%s\n", str_of(p, "namespace"),
                                 str_of(p, "name"), str_of(p, "extendedResourceClaim"));
}

static void print_flat_dra(dp_strbuf *o, const dp_doc_node *root) {
        const dp_doc_node *p, *c, *d, *id;
        FOREACH_ITEM(p, seq_of(root, "draPlugins")) {
                dp_strbuf_printf(o, "dra-plugin %s %s endpoint=%s version=%s\n", str_of(p, "name"), str_of(p, "state"),
                                 str_of(p, "endpoint"), str_of(p, "version"));
                if (dp_doc_get(p, "error"))
                        dp_strbuf_printf(o, "dra-plugin-error %s %s\n", str_of(p, "socket"), str_of(p, "error"));
        }
        FOREACH_ITEM(p, seq_of(root, "draPods")) {
                dp_strbuf_printf(o, "dra-pod %s/%s phase=%s attempts=%s\n", str_of(p, "namespace"), str_of(p, "name"),
                                 str_of(p, "phase"), str_of(p, "attempts"));
                if (dp_doc_get(p, "message"))
                        dp_strbuf_printf(o, "dra-pod-message %s/%s %s\n", str_of(p, "namespace"), str_of(p, "name"),
                                         str_of(p, "message"));
                pod_claim_lines(o, p);
                FOREACH_ITEM(c, seq_of(p, "containers")) {
                        dp_strbuf_printf(o, "dra-cdi %s/%s/%s ", str_of(p, "namespace"), str_of(p, "name"),
                                         str_of(c, "name"));
                        ids_joined(o, seq_of(c, "cdiDevices"));
                        dp_strbuf_putc(o, '\n');
                        FOREACH_ITEM(d, seq_of(c, "allocatedResourcesStatus"))
                        dp_strbuf_printf(o, "dra-ctr-health %s/%s/%s %s %s %s\n", str_of(p, "namespace"),
                                         str_of(p, "name"), str_of(c, "name"), str_of(d, "name"),
                                         str_of(d, "resourceID"), str_of(d, "health"));
                        const dp_doc_node *env = dp_doc_get(c, "env");
                        for (size_t k = 0; env && env->type == DP_DOC_MAP && k < env->n; k++)
                                dp_strbuf_printf(o, "dra-env %s/%s/%s %s=%s\n", str_of(p, "namespace"),
                                                 str_of(p, "name"), str_of(c, "name"), env->pairs[k].key,
                                                 env->pairs[k].value->type == DP_DOC_SCALAR ? env->pairs[k].value->str
                                                                                            : "");
                }
        }
        FOREACH_ITEM(p, seq_of(root, "draHealth")) {
                dp_strbuf_printf(o, "dra-health-stream %s %s\n", str_of(p, "driver"), str_of(p, "state"));
                FOREACH_ITEM(d, seq_of(p, "devices")) {
                        dp_strbuf_printf(o, "dra-health %s %s/%s %s", str_of(p, "driver"), str_of(d, "pool"),
                                         str_of(d, "device"), str_of(d, "health"));
                        if (dp_doc_get(d, "message")) dp_strbuf_printf(o, " %s", str_of(d, "message"));
                        dp_strbuf_putc(o, '\n');
                }
        }
        const dp_doc_node *st = dp_doc_get(root, "draState");
        if (st) {
                dp_strbuf_printf(o, "dra-state %s%s\n", str_of(st, "origin"),
                                 dp_doc_get(st, "rebuild") && streq(str_of(st, "rebuild"), "true") ? " rebuild" : "");
                if (dp_doc_get(st, "error")) dp_strbuf_printf(o, "dra-state-error %s\n", str_of(st, "error"));
                FOREACH_ITEM(c, seq_of(st, "unknownDrivers"))
                dp_strbuf_printf(o, "dra-state-unknown %s %s\n", str_of(c, "driver"), str_of(c, "reason"));
        }
        FOREACH_ITEM(c, seq_of(root, "draClaims")) {
                dp_strbuf_printf(o, "dra-claim %s/%s uid=%s driver=%s devices=", str_of(c, "namespace"),
                                 str_of(c, "name"), str_of(c, "uid"), str_of(c, "driver"));
                bool first = true;
                FOREACH_ITEM(d, seq_of(c, "devices")) {
                        dp_strbuf_printf(o, "%s%s/%s", first ? "" : ",", str_of(d, "pool"), str_of(d, "device"));
                        first = false;
                }
                if (first) dp_strbuf_putc(o, '-');
                if (dp_doc_get(c, "skipped")) dp_strbuf_puts(o, " skipped");
                if (dp_doc_get(c, "state")) {
                        dp_strbuf_printf(o, " state=%s pods=", str_of(c, "state"));
                        ids_joined(o, seq_of(c, "pods"));
                }
                dp_strbuf_putc(o, '\n');
                (void)id;
        }
}

static void print_flat(dp_strbuf *o, const dp_doc_node *root) {
        dp_strbuf_printf(o, "node %s %s pid=%s generation=%s\n", str_of(root, "node"), str_of(root, "state"),
                         str_of(root, "pid"), str_of(root, "generation"));
        if (dp_doc_get(root, "checkpointError"))
                dp_strbuf_printf(o, "checkpoint-error %s\n", str_of(root, "checkpointError"));
        if (dp_doc_get(root, "checkpointWriteError"))
                dp_strbuf_printf(o, "checkpoint-write-error %s\n", str_of(root, "checkpointWriteError"));
        const dp_doc_node *r, *d, *p, *c, *e;
        FOREACH_ITEM(r, seq_of(root, "resources")) {
                dp_strbuf_printf(o, "resource %s capacity=%s allocatable=%s inuse=%s plugin=%s", str_of(r, "name"),
                                 str_of(r, "capacity"), str_of(r, "allocatable"), str_of(r, "inUse"),
                                 str_of(r, "plugin"));
                if (seq_of(r, "withheld")) {
                        dp_strbuf_puts(o, " withheld=");
                        ids_joined(o, seq_of(r, "withheld"));
                }
                dp_strbuf_putc(o, '\n');
                FOREACH_ITEM(d, seq_of(r, "devices")) {
                        dp_strbuf_printf(o, "device %s %s %s", str_of(r, "name"), str_of(d, "id"), str_of(d, "health"));
                        if (dp_doc_get(d, "holder")) dp_strbuf_printf(o, " holder=%s", str_of(d, "holder"));
                        dp_strbuf_putc(o, '\n');
                }
        }
        FOREACH_ITEM(p, seq_of(root, "pods")) {
                dp_strbuf_printf(o, "pod %s/%s phase=%s attempts=%s allocate-calls=%s\n", str_of(p, "namespace"),
                                 str_of(p, "name"), str_of(p, "phase"), str_of(p, "attempts"),
                                 str_of(p, "allocateCalls"));
                if (dp_doc_get(p, "message"))
                        dp_strbuf_printf(o, "pod-message %s/%s %s\n", str_of(p, "namespace"), str_of(p, "name"),
                                         str_of(p, "message"));
                pod_claim_lines(o, p);
                FOREACH_ITEM(c, seq_of(p, "containers")) {
                        FOREACH_ITEM(e, seq_of(c, "devices")) {
                                dp_strbuf_printf(o, "container %s/%s/%s %s=", str_of(p, "namespace"), str_of(p, "name"),
                                                 str_of(c, "name"), str_of(e, "resource"));
                                ids_joined(o, seq_of(e, "ids"));
                                dp_strbuf_putc(o, '\n');
                                const dp_doc_node *envs = dp_doc_get(e, "envs");
                                for (size_t k = 0; envs && envs->type == DP_DOC_MAP && k < envs->n; k++)
                                        dp_strbuf_printf(o, "env %s/%s/%s %s=%s\n", str_of(p, "namespace"),
                                                         str_of(p, "name"), str_of(c, "name"), envs->pairs[k].key,
                                                         envs->pairs[k].value->type == DP_DOC_SCALAR
                                                                 ? envs->pairs[k].value->str
                                                                 : "");
                        }
                }
        }
        FOREACH_ITEM(e, seq_of(root, "unproven"))
        dp_strbuf_printf(o, "unproven %s/%s uid=%s %s\n", str_of(e, "namespace"), str_of(e, "name"), str_of(e, "uid"),
                         str_of(e, "resource"));
        FOREACH_ITEM(e, seq_of(root, "manifestErrors"))
        dp_strbuf_printf(o, "manifest-error %s %s\n", str_of(e, "file"), str_of(e, "message"));
        print_flat_dra(o, root);
}

/* Cells of a table (base/table.h: columns as wide as their content). */
static void cells(dp_table *t, size_t n, ...) {
        va_list ap;
        va_start(ap, n);
        for (size_t i = 0; i < n; i++)
                dp_table_add(t, va_arg(ap, const char *));
        va_end(ap);
}

/* A list joined with commas into one cell. */
static void ids_cell(dp_table *t, const dp_doc_node *seq) {
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        ids_joined(&sb, seq);
        if (dp_strbuf_failed(&sb)) t->oom = true;
        dp_table_add(t, dp_strbuf_str(&sb));
}

/* DRA drivers, pods and prepared claims (only when the DRA manager runs). */
static void print_table_dra(dp_strbuf *o, const dp_doc_node *root) {
        if (!dp_doc_get(root, "draPlugins")) return;
        const dp_doc_node *p, *c, *d;
        _cleanup_table_ dp_table t = DP_TABLE_INIT(3);
        cells(&t, 3, "DRA DRIVER", "STATE", "ENDPOINT / ERROR");
        FOREACH_ITEM(p, seq_of(root, "draPlugins"))
        cells(&t, 3, *str_of(p, "name") ? str_of(p, "name") : str_of(p, "socket"), str_of(p, "state"),
              dp_doc_get(p, "error") ? str_of(p, "error") : str_of(p, "endpoint"));
        dp_strbuf_putc(o, '\n');
        dp_table_print(&t, o);
        t = (dp_table)DP_TABLE_INIT(4);
        cells(&t, 4, "CLAIM", "DRIVER", "UID", "DEVICES");
        FOREACH_ITEM(c, seq_of(root, "draClaims")) {
                dp_table_addf(&t, "%s/%s", str_of(c, "namespace"), str_of(c, "name"));
                cells(&t, 2, str_of(c, "driver"), str_of(c, "uid"));
                _cleanup_strbuf_ dp_strbuf devs = DP_STRBUF_INIT;
                FOREACH_ITEM(d, seq_of(c, "devices"))
                dp_strbuf_printf(&devs, "%s%s", devs.len ? "," : "", str_of(d, "device"));
                if (dp_strbuf_failed(&devs)) t.oom = true;
                dp_table_add(&t, devs.len                   ? dp_strbuf_str(&devs)
                                 : dp_doc_get(c, "skipped") ? "(node operations skipped)"
                                                            : "-");
        }
        dp_strbuf_putc(o, '\n');
        dp_table_print(&t, o);
        t = (dp_table)DP_TABLE_INIT(3);
        cells(&t, 3, "DRA POD", "PHASE", "CONTAINERS: CDI DEVICES / WHY");
        FOREACH_ITEM(p, seq_of(root, "draPods")) {
                dp_table_addf(&t, "%s/%s", str_of(p, "namespace"), str_of(p, "name"));
                dp_table_add(&t, str_of(p, "phase"));
                _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT;
                if (dp_doc_get(p, "message")) dp_strbuf_puts(&why, str_of(p, "message"));
                FOREACH_ITEM(c, seq_of(p, "containers")) {
                        dp_strbuf_printf(&why, "%s%s: ", why.len ? " " : "", str_of(c, "name"));
                        ids_joined(&why, seq_of(c, "cdiDevices"));
                }
                if (dp_strbuf_failed(&why)) t.oom = true;
                dp_table_add(&t, dp_strbuf_str(&why));
        }
        dp_strbuf_putc(o, '\n');
        dp_table_print(&t, o);
        const dp_doc_node *hl = seq_of(root, "draHealth");
        if (!hl || hl->type != DP_DOC_SEQ || !hl->n) return;
        t = (dp_table)DP_TABLE_INIT(4);
        cells(&t, 4, "DRA HEALTH (DRIVER)", "POOL/DEVICE", "HEALTH", "MESSAGE");
        FOREACH_ITEM(p, hl) {
                if (!seq_of(p, "devices") || !seq_of(p, "devices")->n)
                        cells(&t, 4, str_of(p, "driver"), "-", "-", str_of(p, "state"));
                FOREACH_ITEM(d, seq_of(p, "devices")) {
                        dp_table_add(&t, str_of(p, "driver"));
                        dp_table_addf(&t, "%s/%s", str_of(d, "pool"), str_of(d, "device"));
                        cells(&t, 2, str_of(d, "health"), str_of(d, "message"));
                }
        }
        dp_strbuf_putc(o, '\n');
        dp_table_print(&t, o);
}

static void print_table(dp_strbuf *o, const dp_doc_node *root) {
        const dp_doc_node *e0;
        dp_strbuf_printf(o, "NODE %s (%s)\n", str_of(root, "node"), str_of(root, "state"));
        if (dp_doc_get(root, "checkpointError"))
                dp_strbuf_printf(o, "CHECKPOINT ERROR: %s\n", str_of(root, "checkpointError"));
        if (dp_doc_get(root, "checkpointWriteError"))
                dp_strbuf_printf(o, "CHECKPOINT NOT WRITTEN: %s\n", str_of(root, "checkpointWriteError"));
        FOREACH_ITEM(e0, seq_of(root, "unproven"))
        dp_strbuf_printf(o, "UNPROVEN: pod %s/%s may hold %s devices; those no record holds are withheld\n",
                         str_of(e0, "namespace"), str_of(e0, "name"), str_of(e0, "resource"));
        const dp_doc_node *r, *d, *p, *c, *e;
        _cleanup_table_ dp_table t = DP_TABLE_INIT(5);
        cells(&t, 5, "RESOURCE", "CAPACITY", "ALLOCATABLE", "IN USE", "PLUGIN");
        FOREACH_ITEM(r, seq_of(root, "resources")) {
                cells(&t, 4, str_of(r, "name"), str_of(r, "capacity"), str_of(r, "allocatable"), str_of(r, "inUse"));
                _cleanup_strbuf_ dp_strbuf plugin = DP_STRBUF_INIT;
                dp_strbuf_puts(&plugin, str_of(r, "plugin"));
                bool any = false;
                FOREACH_ITEM(d, seq_of(r, "devices")) {
                        if (streq(str_of(d, "health"), "Healthy")) continue;
                        dp_strbuf_printf(&plugin, "%s%s", any ? "," : "  unhealthy: ", str_of(d, "id"));
                        any = true;
                }
                if (dp_strbuf_failed(&plugin)) t.oom = true;
                dp_table_add(&t, dp_strbuf_str(&plugin));
        }
        dp_strbuf_putc(o, '\n');
        dp_table_print(&t, o);
        t = (dp_table)DP_TABLE_INIT(5);
        cells(&t, 5, "POD", "CONTAINER", "RESOURCE", "DEVICES", "STATUS");
        FOREACH_ITEM(p, seq_of(root, "pods")) {
                _cleanup_free_ char *pname = dp_asprintf("%s/%s", str_of(p, "namespace"), str_of(p, "name"));
                _cleanup_free_ char *st = dp_doc_get(p, "message")
                                                  ? dp_asprintf("%s: %s", str_of(p, "phase"), str_of(p, "message"))
                                                  : dp_strdup(str_of(p, "phase"));
                if (!pname || !st) t.oom = true;
                bool printed = false;
                FOREACH_ITEM(c, seq_of(p, "containers")) {
                        FOREACH_ITEM(e, seq_of(c, "devices")) {
                                cells(&t, 3, printed ? "" : pname, str_of(c, "name"), str_of(e, "resource"));
                                ids_cell(&t, seq_of(e, "ids"));
                                dp_table_add(&t, printed ? "" : st);
                                printed = true;
                        }
                }
                if (!printed) cells(&t, 5, pname, "-", "-", "-", st);
        }
        dp_strbuf_putc(o, '\n');
        dp_table_print(&t, o);
        const dp_doc_node *me = seq_of(root, "manifestErrors");
        if (me && me->n) {
                dp_strbuf_puts(o, "\nMANIFEST ERRORS\n");
                FOREACH_ITEM(e, me) dp_strbuf_printf(o, "  %s\n", str_of(e, "message"));
        }
        print_table_dra(o, root);
}

void dp_node_status_print(dp_strbuf *out, const dp_doc_node *root, dp_node_status_format fmt) {
        switch (fmt) {
        case DP_NODE_STATUS_JSON:
                dp_doc_emit(out, root, DP_DOC_JSON_PRETTY);
                dp_strbuf_putc(out, '\n');
                break;
        case DP_NODE_STATUS_YAML: dp_doc_emit(out, root, DP_DOC_YAML); break;
        case DP_NODE_STATUS_FLAT: print_flat(out, root); break;
        case DP_NODE_STATUS_TABLE: print_table(out, root); break;
        }
}

static bool conds_hold(const char *flat, const char *const *conds, size_t n) {
        for (size_t i = 0; i < n; i++) {
                bool neg = conds[i][0] == '!';
                const char *needle = conds[i] + neg;
                bool found = false;
                for (const char *line = flat; *line && !found;) {
                        const char *end = strchr(line, '\n');
                        size_t len = end ? (size_t)(end - line) : strlen(line);
                        const char *hit = memmem(line, len, needle, strlen(needle));
                        found = hit != NULL;
                        line += len + (end != NULL);
                }
                if (found == neg) return false;
        }
        return true;
}

static uint64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int dp_node_status_wait(const char *plugin_dir, const char *const *conds, size_t n_conds, int timeout_ms,
                        dp_strbuf *last, dp_error *err) {
        _cleanup_close_ int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (fd < 0) return dp_error_errno(err, -errno, "inotify");
        if (inotify_add_watch(fd, plugin_dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE) < 0)
                return dp_error_errno(err, -errno, "watch %s", plugin_dir);
        uint64_t end = mono_ms() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);
        for (;;) {
                _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
                dp_doc_node *root = NULL;
                if (!s) return -ENOMEM;
                if (dp_node_status_read(plugin_dir, s, &root, NULL) >= 0) {
                        _cleanup_strbuf_ dp_strbuf flat = DP_STRBUF_INIT;
                        print_flat(&flat, root);
                        if (conds_hold(dp_strbuf_str(&flat), conds, n_conds)) return 0;
                        if (last) {
                                dp_strbuf_truncate(last, 0);
                                dp_strbuf_puts(last, dp_strbuf_str(&flat));
                        }
                }
                uint64_t now = mono_ms();
                if (now >= end) return dp_error_set(err, -ETIMEDOUT, "timed out after %d ms", timeout_ms);
                struct pollfd pfd = {fd, POLLIN, 0};
                int r = poll(&pfd, 1, (int)(end - now));
                if (r < 0 && errno != EINTR) return dp_error_errno(err, -errno, "poll");
                char buf[4096];
                while (read(fd, buf, sizeof buf) > 0) {
                }
        }
}
