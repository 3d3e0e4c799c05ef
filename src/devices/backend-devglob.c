/* SPDX-License-Identifier: Apache-2.0
 * backend-devglob.c — device nodes matched by /dev globs and USB
 * vendor:product rules (like the generic device plugin), each exposed
 * `count` times (a share count), with presence-based health: an inotify
 * watch on every directory holding a matched node wakes the daemon; a node
 * that vanished makes its devices unhealthy ("missing"), and its return
 * makes them healthy again; the poll interval re-checks presence as a safety
 * net. New matches appear only on rediscovery. */
#include <dirent.h>
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "base/strbuf.h"
#include "devices/backend-internal.h"
#include "devices/decode.h"

typedef struct devglob_state {
        int ifd; /* inotify, in the backend's epoll fd; -1 before discovery */
} devglob_state;

typedef struct match {
        char *path;                  /* the node as the container sees it (no dev root) */
        int usb_vendor, usb_product; /* -1 for glob matches */
} match;

static int add_match(match **v, size_t *n, size_t *cap, const char *path, int vendor, int product) {
        for (size_t i = 0; i < *n; i++)
                if (streq((*v)[i].path, path)) return 0; /* a node matched twice is one device */
        if (*n >= DP_DEVICES_MAX) return -E2BIG;
        if (DP_GROW(*v, *cap, *n + 1) < 0) return -ENOMEM;
        if (!((*v)[*n].path = dp_strdup(path))) return -ENOMEM;
        (*v)[*n].usb_vendor = vendor;
        (*v)[*n].usb_product = product;
        (*n)++;
        return 0;
}

static int glob_matches(const dp_backend *b, const char *pattern, match **v, size_t *n, size_t *cap) {
        _cleanup_free_ char *full = dp_backend_dev_path(b, pattern);
        if (!full) return -ENOMEM;
        size_t skip = strlen(full) - strlen(pattern);
        glob_t g;
        int gr = glob(full, 0, NULL, &g); /* sorted: ids follow path order */
        if (gr == GLOB_NOMATCH) return 0;
        if (gr != 0) return gr == GLOB_NOSPACE ? -ENOMEM : -EIO;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < g.gl_pathc; i++)
                r = add_match(v, n, cap, g.gl_pathv[i] + skip, -1, -1);
        globfree(&g);
        return r;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* <sysfs>/bus/usb/devices/<dev>/{idVendor,idProduct,busnum,devnum} -> /dev/bus/usb/BBB/DDD. */
static int usb_matches(const dp_backend *b, const dp_devglob_rule *rule, match **v, size_t *n, size_t *cap) {
        _cleanup_free_ char *root = dp_backend_sysfs_path(b, "bus/usb/devices");
        if (!root) return -ENOMEM;
        DIR *dir = opendir(root);
        if (!dir) return 0; /* no USB on this machine */
        char *names[1024];
        size_t nn = 0;
        struct dirent *de;
        int r = 0;
        while ((de = readdir(dir)) && nn < ELEMENTSOF(names)) {
                if (de->d_name[0] == '.' || strchr(de->d_name, ':')) continue; /* interfaces have ':' */
                if (!(names[nn] = dp_strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                nn++;
        }
        closedir(dir);
        qsort(names, nn, sizeof *names, cmp_name);
        for (size_t i = 0; i < nn; i++) {
                char path[4200], buf[32];
                int vendor, product, bus, dev;
                dp_pathf(path, sizeof path, "%s/%s/idVendor", root, names[i]);
                if (r < 0 || dp_backend_read_line(path, buf, sizeof buf) <= 0) continue;
                vendor = (int)strtol(buf, NULL, 16);
                dp_pathf(path, sizeof path, "%s/%s/idProduct", root, names[i]);
                if (dp_backend_read_line(path, buf, sizeof buf) <= 0) continue;
                product = (int)strtol(buf, NULL, 16);
                dp_pathf(path, sizeof path, "%s/%s/busnum", root, names[i]);
                if (dp_backend_read_line(path, buf, sizeof buf) <= 0) continue;
                bus = (int)strtol(buf, NULL, 10);
                dp_pathf(path, sizeof path, "%s/%s/devnum", root, names[i]);
                if (dp_backend_read_line(path, buf, sizeof buf) <= 0) continue;
                dev = (int)strtol(buf, NULL, 10);
                if (bus < 0 || bus > 999 || dev < 0 || dev > 999) continue;
                for (size_t k = 0; k < rule->n_usb; k++) {
                        const dp_usb_match *u = &rule->usb[k];
                        if (u->vendor != vendor || (u->product >= 0 && u->product != product)) continue;
                        char node[64];
                        dp_pathf(node, sizeof node, "/dev/bus/usb/%03d/%03d", bus, dev);
                        r = add_match(v, n, cap, node, vendor, product);
                        break;
                }
        }
        for (size_t i = 0; i < nn; i++)
                free(names[i]);
        return r;
}

static int add_devices(const dp_backend *b, dp_device_set *s, size_t *dcap, const dp_devglob_rule *rule, const match *m,
                       size_t nm) {
        unsigned next = 0;
        for (size_t i = 0; i < s->n_devices; i++)
                if (streq(s->devices[i].type, rule->type)) next++;
        for (size_t i = 0; i < nm; i++)
                for (unsigned k = 0; k < rule->count; k++) {
                        int r = 0;
                        dp_hw_device *d = dp_backend_set_add(s, dcap, &r);
                        if (!d) return r;
                        char salt[4200];
                        dp_pathf(salt, sizeof salt, "devglob/%s", m[i].path);
                        d->index = next++;
                        if (!(d->type = dp_strdup(rule->type)) ||
                            !(d->id = dp_asprintf("%s-%u", rule->type, d->index)) ||
                            !(d->uuid = dp_device_uuid_derive("DEV-", b->node_name, salt, k)))
                                return -ENOMEM;
                        if ((r = dp_backend_strv_add(&d->device_nodes, &d->n_device_nodes, m[i].path)) < 0) return r;
                        if ((r = dp_backend_attr_str(d, "path", DP_HW_ATTR_STRING, m[i].path)) < 0) return r;
                        if (rule->count > 1 && (r = dp_backend_attr_int(d, "share", k)) < 0) return r;
                        if (m[i].usb_vendor >= 0) {
                                char buf[8];
                                dp_pathf(buf, sizeof buf, "%04x", (unsigned)m[i].usb_vendor);
                                if ((r = dp_backend_attr_str(d, "usbVendorID", DP_HW_ATTR_STRING, buf)) < 0) return r;
                                dp_pathf(buf, sizeof buf, "%04x", (unsigned)m[i].usb_product);
                                if ((r = dp_backend_attr_str(d, "usbProductID", DP_HW_ATTR_STRING, buf)) < 0) return r;
                        }
                }
        return 0;
}

static bool node_present(const char *path, void *userdata) {
        const dp_backend *b = userdata;
        char full[8300];
        dp_pathf(full, sizeof full, "%s%s", b->dev_root ? b->dev_root : "", path);
        struct stat st;
        return stat(full, &st) == 0;
}

int dp_devglob_presence_update(dp_fault_tracker *tr, const dp_device_set *set, dp_devglob_present_fn present,
                               void *userdata, uint64_t now_usec) {
        assert_return(tr && present, -EINVAL);
        int changed = 0;
        for (size_t i = 0; set && i < set->n_devices; i++) {
                const dp_hw_device *d = &set->devices[i];
                bool here = true;
                for (size_t k = 0; here && k < d->n_device_nodes; k++)
                        here = present(d->device_nodes[k], userdata);
                const dp_fault_entry *e = dp_fault_tracker_find(tr, d->id);
                if (!here && !e) {
                        int r = dp_fault_tracker_raise(tr, d->id, "missing", true, now_usec);
                        if (r < 0) return r;
                        changed++;
                } else if (here && e && streq(e->fault_class, "missing")) {
                        changed += dp_fault_tracker_clear(tr, d->id);
                }
        }
        return changed;
}

/* Watch the directory of every node. Called on discovery (fresh inotify fd)
 * and on each dispatch (same fd: re-adding a watch is a no-op, and a
 * directory that vanished and came back is watched again). */
static int add_watches(const dp_backend *b, const devglob_state *st, const dp_device_set *s) {
        for (size_t i = 0; s && i < s->n_devices; i++)
                for (size_t k = 0; k < s->devices[i].n_device_nodes; k++) {
                        _cleanup_free_ char *full = dp_backend_dev_path(b, s->devices[i].device_nodes[k]);
                        if (!full) return -ENOMEM;
                        /* Same directory twice returns the same watch: harmless. */
                        if (inotify_add_watch(st->ifd, dirname(full),
                                              IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF) <
                                    0 &&
                            errno != ENOENT)
                                return -errno;
                }
        return 0;
}

static int watch_dirs(dp_backend *b, devglob_state *st, const dp_device_set *s) {
        if (st->ifd >= 0) close(st->ifd); /* closing drops it from the epoll set */
        st->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (st->ifd < 0) return -errno;
        int r = dp_backend_watch_fd(b, st->ifd);
        if (r < 0) return r;
        return add_watches(b, st, s);
}

static int devglob_discover(dp_backend *b, dp_device_set **ret, dp_error *err) {
        devglob_state *st = b->priv;
        _cleanup_(dp_device_set_freep) dp_device_set *s =
                dp_backend_set_new(b, "devglob", "devplane.io", "dev", "device", "DEVPLANE_VISIBLE_DEVICES");
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t dcap = 0;
        for (size_t i = 0; i < b->cfg->n_devglob; i++) {
                const dp_devglob_rule *rule = &b->cfg->devglob[i];
                match *m = NULL;
                size_t nm = 0, mcap = 0;
                int r = 0;
                for (size_t k = 0; r >= 0 && k < rule->n_paths; k++)
                        r = glob_matches(b, rule->paths[k], &m, &nm, &mcap);
                if (r >= 0 && rule->n_usb) r = usb_matches(b, rule, &m, &nm, &mcap);
                if (r >= 0) r = add_devices(b, s, &dcap, rule, m, nm);
                for (size_t k = 0; k < nm; k++)
                        free(m[k].path);
                free(m);
                if (r == -E2BIG)
                        return dp_error_set(err, r,
                                            "devglob backend: spec.devglob[%zu] (%s): more than %d devices with shares",
                                            i, rule->type, DP_DEVICES_MAX);
                if (r < 0)
                        return dp_error_set(err, r, "devglob backend: spec.devglob[%zu] (%s): %s", i, rule->type,
                                            strerror(-r));
        }
        int r = watch_dirs(b, st, s);
        if (r < 0) return dp_error_errno(err, r, "devglob backend: inotify");
        *ret = TAKE_PTR(s);
        return 0;
}

static int devglob_poll(dp_backend *b, const dp_device_set *set, uint64_t now_usec, dp_error *err) {
        devglob_state *st = b->priv;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        while (st->ifd >= 0 && read(st->ifd, buf, sizeof buf) > 0) {
        } /* the events only wake us */
        int r = st->ifd >= 0 ? add_watches(b, st, set) : 0;
        if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
        r = dp_devglob_presence_update(&b->tracker, set, node_present, b, now_usec);
        if (r < 0) return dp_error_set(err, r, "devglob backend: %s", strerror(-r));
        return r;
}

static int devglob_open(dp_backend *b, dp_error *err) {
        if (b->cfg->n_devglob == 0)
                return dp_error_set(err, -EINVAL, "devglob backend: the backend config has no spec.devglob rules");
        devglob_state *st = calloc(1, sizeof *st);
        if (!st) return dp_error_set(err, -ENOMEM, "out of memory");
        st->ifd = -1;
        b->priv = st;
        return 0;
}

static void devglob_close(dp_backend *b) {
        devglob_state *st = b->priv;
        if (!st) return;
        if (st->ifd >= 0) close(st->ifd);
        free(st);
        b->priv = NULL;
}

const dp_backend_ops dp_backend_devglob_ops = {
        .open = devglob_open,
        .discover = devglob_discover,
        .poll = devglob_poll,
        .close = devglob_close,
        /* inotify reacts at once; the poll interval is the safety net for what
         * it cannot see (a watched directory removed and re-created). */
        .polls = true,
};
