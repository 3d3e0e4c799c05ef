/* SPDX-License-Identifier: Apache-2.0
 * backend.c — the backend front: open/close, the epoll fd with its timerfd,
 * dispatch (poll -> fault tracker -> health), explicit recovery, and helpers
 * the backends share for building device sets. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "base/strbuf.h"
#include "devices/backend-internal.h"
#include "devices/decode.h"

static const char *const kind_names[] = {"mock", "pci", "devglob", "nvml", NULL};

int dp_backend_kind_from_string(const char *s, dp_backend_kind *ret) {
        assert_return(ret, -EINVAL);
        for (int i = 0; s && kind_names[i]; i++)
                if (streq(s, kind_names[i])) {
                        *ret = (dp_backend_kind)i;
                        return 0;
                }
        return -EINVAL;
}

const char *dp_backend_kind_to_string(dp_backend_kind k) {
        return (unsigned)k < ELEMENTSOF(kind_names) - 1 ? kind_names[k] : "invalid";
}

static const dp_backend_ops *ops_of(dp_backend_kind k) {
        switch (k) {
        case DP_BACKEND_MOCK: return &dp_backend_mock_ops;
        case DP_BACKEND_PCI: return &dp_backend_pci_ops;
        case DP_BACKEND_DEVGLOB: return &dp_backend_devglob_ops;
        case DP_BACKEND_NVML: return &dp_backend_nvml_ops;
        }
        return NULL;
}

static int dup_opt(const char *s, char **ret) {
        if (!s) return 0;
        if (!(*ret = dp_strdup(s))) return -ENOMEM;
        return 0;
}

int dp_backend_watch_fd(dp_backend *b, int fd) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) return -errno;
        return 0;
}

int dp_backend_open(dp_backend_kind kind, const dp_backend_options *o, dp_backend **ret, dp_error *err) {
        assert_return(o && o->node_name && *o->node_name && ret, -EINVAL);
        const dp_backend_ops *ops = ops_of(kind);
        if (!ops) return dp_error_set(err, -EINVAL, "unknown backend %d", (int)kind);
        _cleanup_(dp_backend_closep) dp_backend *b = calloc(1, sizeof *b);
        if (!b) return dp_error_set(err, -ENOMEM, "out of memory");
        b->kind = kind;
        b->epfd = b->tfd = -1;
        if (dup_opt(o->node_name, &b->node_name) < 0 || dup_opt(o->profile, &b->profile) < 0 ||
            dup_opt(o->sysfs_root, &b->sysfs_root) < 0 || dup_opt(o->dev_root, &b->dev_root) < 0 ||
            dup_opt(o->proc_root, &b->proc_root) < 0 || dup_opt(o->nvml_library, &b->nvml_library) < 0)
                return dp_error_set(err, -ENOMEM, "out of memory");
        int r;
        if (o->config_path) {
                if ((r = dp_backend_config_load_file(o->config_path, &b->cfg, err)) < 0) return r;
        } else if (!(b->cfg = dp_backend_config_new_default()))
                return dp_error_set(err, -ENOMEM, "out of memory");
        if (o->env_health && (r = dp_fault_table_apply_env(&b->cfg->faults, getenv("DP_DISABLE_HEALTHCHECKS"),
                                                           getenv("DP_ENABLE_HEALTHCHECKS"), err)) < 0)
                return r;
        if ((b->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) return dp_error_errno(err, -errno, "epoll_create1");
        if ((b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) < 0)
                return dp_error_errno(err, -errno, "timerfd_create");
        if ((r = dp_backend_watch_fd(b, b->tfd)) < 0) return dp_error_errno(err, r, "epoll_ctl");
        b->ops = ops; /* from here on close() calls ops->close */
        if ((r = ops->open(b, err)) < 0) return r;
        *ret = TAKE_PTR(b);
        return 0;
}

dp_backend *dp_backend_close(dp_backend *b) {
        if (!b) return NULL;
        if (b->ops && b->ops->close) b->ops->close(b);
        if (b->tfd >= 0) close(b->tfd);
        if (b->epfd >= 0) close(b->epfd);
        dp_fault_tracker_done(&b->tracker);
        dp_backend_config_free(b->cfg);
        dp_free_many(b->node_name, b->profile, b->sysfs_root, b->dev_root, b->proc_root, b->nvml_library);
        free(b);
        return NULL;
}

dp_backend_kind dp_backend_get_kind(const dp_backend *b) { return b ? b->kind : DP_BACKEND_MOCK; }
const dp_backend_config *dp_backend_get_config(const dp_backend *b) { return b ? b->cfg : NULL; }
int dp_backend_fd(const dp_backend *b) { return b ? b->epfd : -1; }

size_t dp_backend_faults(const dp_backend *b, const dp_fault_entry **ret) {
        if (!b) return 0;
        if (ret) *ret = b->tracker.items;
        return b->tracker.n;
}

static void arm(dp_backend *b, uint64_t now_usec) {
        uint64_t next = dp_fault_tracker_next_expiry(&b->tracker, b->cfg->faults.recover_after_usec);
        if (b->ops->polls && b->cfg->faults.poll_interval_usec) {
                uint64_t p = now_usec + b->cfg->faults.poll_interval_usec;
                if (!next || p < next) next = p;
        }
        struct itimerspec its = {0};
        if (next) {
                its.it_value.tv_sec = (time_t)(next / 1000000ULL);
                its.it_value.tv_nsec = (long)(next % 1000000ULL) * 1000L;
                if (!its.it_value.tv_sec && !its.it_value.tv_nsec) its.it_value.tv_nsec = 1;
        }
        (void)timerfd_settime(b->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Backend health of every device and MIG instance from the tracker. */
static int apply_faults(dp_backend *b, dp_device_set *set) {
        int changed = 0;
        for (size_t i = 0; set && i < set->n_devices; i++) {
                dp_hw_device *d = &set->devices[i];
                dp_health h = dp_fault_tracker_find(&b->tracker, d->id) ? DP_HEALTH_UNHEALTHY : DP_HEALTH_HEALTHY;
                if (h != d->profile_health) {
                        d->profile_health = d->health = h;
                        changed++;
                }
                for (size_t j = 0; j < d->n_migs; j++) {
                        dp_mig_device *m = &d->migs[j];
                        dp_health mh =
                                dp_fault_tracker_find(&b->tracker, m->id) ? DP_HEALTH_UNHEALTHY : DP_HEALTH_HEALTHY;
                        if (mh != m->profile_health) {
                                m->profile_health = m->health = mh;
                                changed++;
                        }
                }
        }
        return changed;
}

int dp_backend_discover(dp_backend *b, dp_device_set **ret, dp_error *err) {
        assert_return(b && ret, -EINVAL);
        _cleanup_(dp_device_set_freep) dp_device_set *s = NULL;
        int r = b->ops->discover(b, &s, err);
        if (r < 0) return r;
        /* Faults of devices that are gone are dropped. */
        for (size_t i = 0; i < b->tracker.n;) {
                const char *id = b->tracker.items[i].device;
                if (!dp_device_set_find(s, id) && !dp_device_set_find_mig(s, id))
                        dp_fault_tracker_clear(&b->tracker, id);
                else
                        i++;
        }
        if (b->kind != DP_BACKEND_MOCK) (void)apply_faults(b, s);
        arm(b, dp_backend_now_usec());
        *ret = TAKE_PTR(s);
        return 0;
}

int dp_backend_dispatch(dp_backend *b, dp_device_set *set, uint64_t now_usec, dp_error *err) {
        assert_return(b, -EINVAL);
        uint64_t ticks;
        while (read(b->tfd, &ticks, sizeof ticks) == (ssize_t)sizeof ticks) {
        }
        int r = b->ops->poll ? b->ops->poll(b, set, now_usec, err) : 0;
        (void)dp_fault_tracker_expire(&b->tracker, now_usec, b->cfg->faults.recover_after_usec);
        int changed = b->kind != DP_BACKEND_MOCK ? apply_faults(b, set) : 0;
        arm(b, now_usec);
        return r < 0 ? r : changed;
}

int dp_backend_recover(dp_backend *b, dp_device_set *set, const char *id, uint64_t now_usec) {
        assert_return(b && id, -EINVAL);
        const char *key = id;
        const dp_hw_device *d = dp_device_set_find(set, id);
        const dp_mig_device *m = d ? NULL : dp_device_set_find_mig(set, id);
        if (d)
                key = d->id;
        else if (m)
                key = m->id;
        else if (!dp_fault_tracker_find(&b->tracker, id))
                return -ENOENT;
        (void)dp_fault_tracker_clear(&b->tracker, key);
        int changed = b->kind != DP_BACKEND_MOCK ? apply_faults(b, set) : 0;
        arm(b, now_usec);
        return changed;
}

/* ---- helpers for the backends ---- */

uint64_t dp_backend_now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

char *dp_backend_sysfs_path(const dp_backend *b, const char *rel) {
        const char *root = b->sysfs_root ? b->sysfs_root : "/sys";
        return dp_asprintf("%s%s%s", root, rel[0] == '/' ? "" : "/", rel);
}

char *dp_backend_dev_path(const dp_backend *b, const char *abs) {
        const char *root = b->dev_root ? b->dev_root : "";
        return dp_asprintf("%s%s", root, abs);
}

dp_device_set *dp_backend_set_new(const dp_backend *b, const char *profile, const char *domain,
                                  const char *driver_prefix, const char *cdi_class, const char *env) {
        _cleanup_(dp_device_set_freep) dp_device_set *s = calloc(1, sizeof *s);
        if (!s) return NULL;
        const char *dom = b->cfg->domain ? b->cfg->domain : domain;
        s->profile = dp_strdup(profile);
        s->node_name = dp_strdup(b->node_name);
        s->domain = dp_strdup(dom);
        s->driver_name =
                b->cfg->driver_name ? dp_strdup(b->cfg->driver_name) : dp_asprintf("%s.%s", driver_prefix, dom);
        s->cdi_kind = dp_asprintf("%s/%s", dom, cdi_class);
        s->visible_devices_env = dp_strdup(env);
        if (!s->profile || !s->node_name || !s->domain || !s->driver_name || !s->cdi_kind || !s->visible_devices_env)
                return NULL;
        return TAKE_PTR(s);
}

dp_hw_device *dp_backend_set_add(dp_device_set *s, size_t *cap, int *ret_err) {
        if (s->n_devices >= DP_DEVICES_MAX) {
                *ret_err = -E2BIG;
                return NULL;
        }
        if (DP_GROW(s->devices, *cap, s->n_devices + 1) < 0) {
                *ret_err = -ENOMEM;
                return NULL;
        }
        dp_hw_device *d = &s->devices[s->n_devices++];
        memset(d, 0, sizeof *d);
        d->numa_node = -1;
        return d;
}

int dp_backend_strv_add(char ***v, size_t *n, const char *s) {
        if (*n >= DP_DEVICES_NODES_MAX) return -E2BIG;
        char **nv = realloc(*v, (*n + 1) * sizeof(char *));
        if (!nv) return -ENOMEM;
        *v = nv;
        if (!(nv[*n] = dp_strdup(s))) return -ENOMEM;
        (*n)++;
        return 0;
}

static dp_hw_attr *attr_new(dp_hw_device *d, const char *name) {
        if (d->n_attrs + d->n_capacities >= DP_DEVICES_ATTRS_MAX) return NULL;
        dp_hw_attr *v = realloc(d->attrs, (d->n_attrs + 1) * sizeof *v);
        if (!v) return NULL;
        d->attrs = v;
        dp_hw_attr *a = &v[d->n_attrs];
        memset(a, 0, sizeof *a);
        if (!(a->name = dp_strdup(name))) return NULL;
        d->n_attrs++;
        return a;
}

int dp_backend_attr_str(dp_hw_device *d, const char *name, dp_hw_attr_type t, const char *val) {
        if (!val) return 0;
        dp_hw_attr *a = attr_new(d, name);
        if (!a) return -ENOMEM;
        a->type = t;
        return (a->str = dp_strdup(val)) ? 0 : -ENOMEM;
}

int dp_backend_attr_int(dp_hw_device *d, const char *name, int64_t v) {
        dp_hw_attr *a = attr_new(d, name);
        if (!a) return -ENOMEM;
        a->type = DP_HW_ATTR_INT;
        a->i = v;
        return 0;
}

int dp_backend_capacity(dp_hw_device *d, const char *name, const char *value) {
        if (d->n_attrs + d->n_capacities >= DP_DEVICES_ATTRS_MAX) return -E2BIG;
        dp_capacity *v = realloc(d->capacities, (d->n_capacities + 1) * sizeof *v);
        if (!v) return -ENOMEM;
        d->capacities = v;
        dp_capacity *c = &v[d->n_capacities];
        c->name = dp_strdup(name);
        c->value = dp_strdup(value);
        if (!c->name || !c->value) {
                dp_free_many(c->name, c->value);
                return -ENOMEM;
        }
        d->n_capacities++;
        return 0;
}

int dp_backend_read_line(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -errno;
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0) return -errno;
        buf[n] = 0;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = 0;
        return (int)n;
}
