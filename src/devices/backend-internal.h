/* SPDX-License-Identifier: Apache-2.0
 *
 * backend-internal.h — what backend.c shares with each backend-<kind>.c.
 * Not part of the module's API.
 *
 * A backend implements dp_backend_ops. backend.c owns the common parts: the
 * epoll fd handed to the daemon, the timerfd in it (poll interval for
 * backends that poll, recovery deadlines for all), the fault tracker, and
 * turning tracked faults into device health.
 */
#pragma once

#include "devices/backend.h"

typedef struct dp_backend_ops {
        /* Load and probe; b->cfg, b->opts are set. */
        int (*open)(dp_backend *b, dp_error *err);
        /* Build a new set; called again on rediscovery. */
        int (*discover)(dp_backend *b, dp_device_set **ret, dp_error *err);
        /* Drain the backend's event sources and raise or clear faults in
         * b->tracker for devices of `set` (NULL-safe: may be called before any
         * discovery). Must not block. */
        int (*poll)(dp_backend *b, const dp_device_set *set, uint64_t now_usec, dp_error *err);
        void (*close)(dp_backend *b);
        bool polls; /* wake up every faults.poll_interval_usec */
} dp_backend_ops;

struct dp_backend {
        dp_backend_kind kind;
        const dp_backend_ops *ops;
        dp_backend_config *cfg;
        /* Owned copies of the options (NULL where defaulted). */
        char *node_name, *profile, *sysfs_root, *dev_root, *proc_root, *nvml_library;
        int epfd; /* handed out by dp_backend_fd() */
        int tfd;  /* timerfd, in epfd */
        dp_fault_tracker tracker;
        void *priv; /* the backend's own state */
};

extern const dp_backend_ops dp_backend_mock_ops;
extern const dp_backend_ops dp_backend_pci_ops;
extern const dp_backend_ops dp_backend_devglob_ops;
extern const dp_backend_ops dp_backend_nvml_ops;

/* Add an fd (EPOLLIN) to the backend's epoll fd. */
int dp_backend_watch_fd(dp_backend *b, int fd);

/* Paths under the configured roots ("" root: the path itself). NULL on OOM. */
char *dp_backend_sysfs_path(const dp_backend *b, const char *rel);
char *dp_backend_dev_path(const dp_backend *b, const char *abs);

/* A new empty set with identity fields for pci/devglob: domain from the
 * config or `domain`, driver name from the config or "<driver_prefix>.<domain>",
 * CDI kind "<domain>/<cdi_class>", visible-devices env `env`. NULL on OOM. */
dp_device_set *dp_backend_set_new(const dp_backend *b, const char *profile, const char *domain,
                                  const char *driver_prefix, const char *cdi_class, const char *env);

/* Append a zeroed device (numa -1, healthy) to the set; NULL on OOM or past
 * DP_DEVICES_MAX (ret_err -ENOMEM / -E2BIG). */
dp_hw_device *dp_backend_set_add(dp_device_set *s, size_t *cap, int *ret_err);
/* Append a string to a device's node list (copied). */
int dp_backend_strv_add(char ***v, size_t *n, const char *s);
/* Append a typed attribute (string values copied). */
int dp_backend_attr_str(dp_hw_device *d, const char *name, dp_hw_attr_type t, const char *v);
int dp_backend_attr_int(dp_hw_device *d, const char *name, int64_t v);
int dp_backend_capacity(dp_hw_device *d, const char *name, const char *value);

/* Read a small sysfs-style file, trailing newline removed. */
int dp_backend_read_line(const char *path, char *buf, size_t size);

/* CLOCK_MONOTONIC in microseconds (the clock dp_loop_now() reads). */
uint64_t dp_backend_now_usec(void);
