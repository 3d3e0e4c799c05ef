/* SPDX-License-Identifier: Apache-2.0
 * The device-plugin agent: one gRPC server per resource name, registration
 * with the kubelet, health and kubelet-restart watches, config reload.
 * The DevicePlugin service itself is in service.c. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "agent/agent-internal.h"
#include "agent/dirlock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "devices/checkpoint.h"
#include "devices/health.h"
#include "dra/inventory.h"
#include "dra/ledger.h"
#include "dra/prepared.h"
#include "proto/proto.h"

#define REGISTER_TIMEOUT_USEC (10ull * 1000 * 1000)

/* ---- small file helpers ------------------------------------------------------ */

/* Read at most max bytes (counted as read) of a regular file: -E2BIG beyond
 * (dp_read_file: never blocks on a FIFO, never follows /dev/zero past max). */
static int read_file_max(const char *path, size_t max, char **ret, size_t *ret_len) {
        return dp_read_file(path, max, ret, ret_len, NULL);
}

static int read_small_file(const char *path, char **ret, size_t *ret_len) {
        return read_file_max(path, DP_HEALTH_FILE_MAX, ret, ret_len);
}

/* A state file that is not a regular file (a directory, a symlink to
 * /dev/zero, a FIFO) is damage, handled as corrupt content is: set aside
 * (never deleted) so the agent can write it again. */
static void state_file_check(const char *dir, const char *name) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", dir, name);
        struct stat st;
        if (!path) return;
        int r = stat(path, &st) < 0 ? -errno : 0;
        if (r == -ENOENT || (r == 0 && S_ISREG(st.st_mode))) return;
        if (r < 0 && r != -ELOOP) {
                log_error("%s: %s", path, strerror(-r));
                return;
        }
        _cleanup_free_ char *to = NULL;
        dp_error e = DP_ERROR_INIT;
        if (dp_dra_file_set_aside(path, &to, &e) < 0)
                log_error("%s: not a regular file, and %s", path, dp_error_msg(&e));
        else
                log_warning("%s: not a regular file: set aside as %s", path, to);
}

/* ---- health ------------------------------------------------------------------ */

int dp_agent_health_set(const char *state_dir, const char *id, dp_health h, dp_error *err) {
        assert_return(state_dir && id, -EINVAL);
        _cleanup_free_ char *devices_path = dp_asprintf("%s/%s", state_dir, DP_AGENT_DEVICES_FILE);
        _cleanup_free_ char *health_path = dp_asprintf("%s/%s", state_dir, DP_HEALTH_FILE_NAME);
        if (!devices_path || !health_path) return -ENOMEM;
        _cleanup_free_ char *known = NULL;
        size_t klen = 0;
        if (read_small_file(devices_path, &known, &klen) == 0) {
                bool found = false;
                for (char *save = NULL, *line = strtok_r(known, "\n", &save); line && !found;
                     line = strtok_r(NULL, "\n", &save))
                        found = streq(line, id);
                if (!found)
                        return dp_error_set(
                                err, -ENOENT,
                                "unknown device \"%s\": the agent using %s has no such device id or uuid (see %s)", id,
                                state_dir, devices_path);
        }
        _cleanup_free_ char *old = NULL;
        size_t olen = 0;
        int r = read_small_file(health_path, &old, &olen);
        if (r < 0 && r != -ENOENT) return dp_error_errno(err, r, "%s", health_path);
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        r = dp_health_file_set(old, olen, id, h, &out, err);
        if (r < 0) return r;
        if (dp_strbuf_failed(&out)) return -ENOMEM;
        if ((r = dp_mkdir_p(state_dir, 0755)) < 0) return dp_error_errno(err, r, "create %s", state_dir);
        return dp_write_file_atomic(state_dir, DP_HEALTH_FILE_NAME, dp_strbuf_str(&out), out.len, 0644, 0, err);
}

static int write_devices_file(dp_agent *a) {
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        for (size_t i = 0; i < a->set->n_devices; i++) {
                const dp_hw_device *d = &a->set->devices[i];
                dp_strbuf_printf(&sb, "%s\n%s\n", d->id, d->uuid);
                for (size_t k = 0; k < d->n_migs; k++)
                        dp_strbuf_printf(&sb, "%s\n%s\n", d->migs[k].id, d->migs[k].uuid);
        }
        if (dp_strbuf_failed(&sb)) return -ENOMEM;
        dp_error e = DP_ERROR_INIT;
        int r = dp_write_file_atomic(a->state_dir, DP_AGENT_DEVICES_FILE, dp_strbuf_str(&sb), sb.len, 0644, 0, &e);
        if (r < 0) log_warning("%s", dp_error_msg(&e));
        return r;
}

/* Re-apply the health file; on a bad file the previous state stays. Returns
 * >0 when something changed. */
static int apply_health_file_to(dp_agent *a, dp_device_set *set, bool at_start) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", a->state_dir, DP_HEALTH_FILE_NAME);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        if (!path) return -ENOMEM;
        int r = read_small_file(path, &buf, &len);
        if (r == -ENOENT)
                len = 0;
        else if (r < 0) {
                log_error("health file %s: %s; health unchanged", path, strerror(-r));
                return r;
        }
        _cleanup_(dp_health_file_freep) dp_health_file *f = NULL;
        dp_error e = DP_ERROR_INIT;
        r = dp_health_file_parse(buf ? buf : "", len, path, &f, &e);
        if (r >= 0) r = dp_health_apply(set, f, path, &e);
        if (r < 0) {
                log_error("%s; health %s", dp_error_msg(&e), at_start ? "as in the profile" : "unchanged");
                return r;
        }
        return r;
}

static int apply_health_file(dp_agent *a, bool at_start) { return apply_health_file_to(a, a->set, at_start); }

/* ---- plugins (one per resource) ------------------------------------------------ */

static void plugin_register(plugin *p);
static void v1_sync_checkpoint(dp_agent *a);

static void on_register_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        plugin *p = ud;
        p->reg_call = NULL;
        dp_grpc_channel *ch = TAKE_PTR(p->reg_ch);
        if (status == DP_GRPC_OK) {
                p->registered = true;
                p->agent->registrations++;
                log_info("registered %s (endpoint %s)", p->resource, p->sock_name);
        } else if (status == DP_GRPC_UNAVAILABLE && p->retries < DP_GRPC_SOCKET_RETRY_MAX) {
                dp_loop_source_set_time(p->retry, dp_loop_now() + dp_grpc_socket_retry_delay(p->retries));
                p->retries++;
        } else {
                log_error("Register %s refused: %s: %s", p->resource, dp_grpc_status_name(status), message);
        }
        dp_grpc_channel_free(ch);
}

static void plugin_register(plugin *p) {
        dp_agent *a = p->agent;
        if (p->reg_ch) return; /* one in flight */
        _cleanup_free_ char *ks = dp_asprintf("%s/kubelet.sock", a->plugin_dir);
        if (!ks) return;
        p->registered = false;
        int r = dp_grpc_channel_connect_unix(a->loop, ks, &p->reg_ch);
        if (r < 0) {
                if (r == -ECONNREFUSED && p->retries < DP_GRPC_SOCKET_RETRY_MAX) {
                        dp_loop_source_set_time(p->retry, dp_loop_now() + dp_grpc_socket_retry_delay(p->retries));
                        p->retries++;
                } else if (r != -ENOENT) {
                        log_warning("Register %s: cannot connect to %s: %s; waiting for it to be re-created",
                                    p->resource, ks, strerror(-r));
                }
                return;
        }
        V1beta1__DevicePluginOptions opts = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        opts.pre_start_required = true;
        opts.get_preferred_allocation_available = true;
        V1beta1__RegisterRequest req = V1BETA1__REGISTER_REQUEST__INIT;
        req.version = (char *)"v1beta1";
        req.endpoint = p->sock_name;
        req.resource_name = p->resource;
        req.options = &opts;
        uint8_t *buf = NULL;
        size_t len = 0;
        r = dp_proto_pack(&req.base, &buf, &len);
        if (r >= 0)
                r = dp_grpc_channel_start_call(p->reg_ch, "/v1beta1.Registration/Register", buf, len,
                                               REGISTER_TIMEOUT_USEC, NULL, on_register_done, p, &p->reg_call);
        free(buf);
        if (r < 0) {
                log_error("Register %s: %s", p->resource, strerror(-r));
                p->reg_ch = dp_grpc_channel_free(p->reg_ch);
        }
}

static int on_retry(dp_loop_source *s, uint64_t now, void *ud) {
        plugin_register(ud);
        return 0;
}

/* A starting kubelet removes every socket in the directory; if it does so
 * between our bind() and chmod(), listening fails with -ENOENT: bind again
 * (its kubelet.sock comes next, and with it a new registration). */
static int plugin_listen(plugin *p) {
        dp_agent *a = p->agent;
        int r = -ENOENT;
        for (unsigned tries = 0; r == -ENOENT && tries < 3; tries++) {
                p->srv = dp_grpc_server_free(p->srv);
                if ((r = dp_grpc_server_new(&p->srv)) < 0) return r;
                if ((r = agent_service_add_methods(p)) < 0) return r;
                r = dp_grpc_server_listen_unix(p->srv, a->loop, p->sock_path, 0600);
        }
        return r;
}

static void plugin_drop_streams(plugin *p) { dp_grpc_streams_finish(&p->streams, DP_GRPC_OK, NULL); }

static plugin *plugin_free(plugin *p) {
        if (!p) return NULL;
        if (p->reg_call) dp_grpc_client_call_cancel(TAKE_PTR(p->reg_call));
        p->reg_ch = dp_grpc_channel_free(p->reg_ch);
        plugin_drop_streams(p);
        dp_grpc_streams_done(&p->streams);
        p->srv = dp_grpc_server_free(p->srv); /* unlinks the socket */
        dp_loop_source_free(p->retry);
        dp_free_many(p->resource, p->sock_name, p->sock_path);
        free(p);
        return NULL;
}
DEFINE_FREEP(plugin, plugin_free)

/* devplane-<resource with / as _>.sock */
static char *plugin_sock_name(const char *resource) {
        char *n = dp_asprintf("devplane-%s.sock", resource);
        for (char *c = n; c && *c; c++)
                if (*c == '/') *c = '_';
        return n;
}

/* Before anything is served: no resource's socket may be live (another
 * agent on this plugin directory). -EADDRINUSE names the socket and pid. */
static int v1_sockets_free(const dp_agent *a, dp_error *err) {
        for (size_t i = 0; i < a->plan->n_resources; i++) {
                _cleanup_free_ char *name = plugin_sock_name(a->plan->resources[i].name);
                _cleanup_free_ char *path = name ? dp_asprintf("%s/%s", a->plugin_dir, name) : NULL;
                if (!path) return -ENOMEM;
                int r = agent_socket_check_free(path, err);
                if (r < 0) return r;
        }
        return 0;
}

static int plugin_new(dp_agent *a, const char *resource, plugin **ret) {
        _cleanup_(plugin_freep) plugin *p = calloc(1, sizeof *p);
        if (!p) return -ENOMEM;
        p->agent = a;
        p->resource = strdup(resource);
        p->sock_name = plugin_sock_name(resource);
        if (!p->resource || !p->sock_name) return -ENOMEM;
        p->sock_path = dp_asprintf("%s/%s", a->plugin_dir, p->sock_name);
        int r = p->sock_path ? dp_loop_add_timer(a->loop, 0, on_retry, p, &p->retry) : -ENOMEM;
        /* Another process serving this socket (a second agent on the same
         * plugin directory): never replace it. */
        dp_error e = DP_ERROR_INIT;
        if (r >= 0 && (r = agent_socket_check_free(p->sock_path, &e)) < 0) log_error("%s", dp_error_msg(&e));
        if (r >= 0) r = plugin_listen(p);
        if (r < 0) return r;
        *ret = TAKE_PTR(p);
        return 0;
}

/* Restart serving (our socket may have been removed by a starting kubelet)
 * and register again. */
static void plugin_restart(plugin *p) {
        if (p->reg_call) dp_grpc_client_call_cancel(TAKE_PTR(p->reg_call));
        p->reg_ch = dp_grpc_channel_free(p->reg_ch);
        plugin_drop_streams(p);
        p->srv = dp_grpc_server_free(p->srv);
        int r = plugin_listen(p);
        if (r < 0) {
                log_error("%s: cannot serve %s: %s", p->resource, p->sock_path, strerror(-r));
                return;
        }
        p->retries = 0;
        plugin_register(p);
}

/* ---- watches --------------------------------------------------------------------- */

static int on_plugin_dir_event(dp_loop_source *s, const struct inotify_event *ev, void *ud) {
        dp_agent *a = ud;
        if (ev->len && streq(ev->name, DP_CHECKPOINT_FILE_NAME) &&
            (ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE))) {
                v1_sync_checkpoint(a);
                return 0;
        }
        if (!ev->len || !streq(ev->name, "kubelet.sock") || !a->v1) return 0;
        if (ev->mask & IN_CREATE) {
                log_info("kubelet.sock created: kubelet (re)started, registering again");
                for (size_t i = 0; i < a->n_plugins; i++)
                        plugin_restart(a->plugins[i]);
        } else if (ev->mask & IN_DELETE) {
                log_info("kubelet.sock removed: waiting for the kubelet to come back");
        }
        return 0;
}

/* ---- V2 inventory and the ledger ----------------------------------------------------- */

/* The inventory of the current set, with the backend's fault classes as
 * taint keys (gpu.nvidia.com/xid-79). */
static int build_inventory_of(dp_agent *a, const dp_device_set *set, dp_dra_inventory **ret, dp_error *err) {
        const dp_fault_entry *fe = NULL;
        size_t nf = dp_backend_faults(a->backend, &fe);
        dp_dra_fault *faults = calloc(nf + 1, sizeof *faults);
        if (!faults) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < nf; i++) {
                if (!dp_device_set_find(set, fe[i].device) && !dp_device_set_find_mig(set, fe[i].device)) continue;
                faults[k].device = fe[i].device;
                faults[k].fault_class = fe[i].fault_class;
                k++;
        }
        dp_dra_inventory_options io = DP_DRA_INVENTORY_OPTIONS_INIT;
        io.faults = faults;
        io.allow_multiple = a->allow_multiple;
        io.n_faults = k;
        int r = dp_dra_inventory_build(set, &io, ret, err);
        free(faults);
        return r;
}

static int build_inventory(dp_agent *a, dp_dra_inventory **ret, dp_error *err) {
        return build_inventory_of(a, a->set, ret, err);
}

static void v1_holders_clear(dp_agent *a) {
        for (size_t i = 0; i < a->n_v1_holders; i++) {
                dp_ledger_release(a->ledger, a->v1_holders[i]);
                free(a->v1_holders[i]);
        }
        free(a->v1_holders);
        a->v1_holders = NULL;
        a->n_v1_holders = 0;
}

static int v1_hold(dp_agent *a, const char *holder, const char *const *ids, size_t n, unsigned flags, dp_error *err) {
        char **v = realloc(a->v1_holders, (a->n_v1_holders + 1) * sizeof *v);
        if (!v) return -ENOMEM;
        a->v1_holders = v;
        int r = dp_ledger_acquire(a->ledger, DP_LEDGER_V1, holder, ids, n, flags, err);
        if (r < 0) return r;
        if (!(v[a->n_v1_holders] = strdup(holder))) {
                dp_ledger_release(a->ledger, holder);
                return -ENOMEM;
        }
        a->n_v1_holders++;
        return r; /* > 0: a replay over another holder's hold (ledger.h) */
}

/* The agent never learns which pod an Allocate was for; the kubelet's
 * checkpoint says it. So V1 holds are: every checkpoint entry of one of
 * this agent's resource names (another plugin's device "0" is not our
 * gpu-0; holder "pod <uid>/<container>"), plus Allocate answers not yet in
 * it. Every checkpoint write replaces them all.
 *
 * Fail closed: the kubelet reads its checkpoint whatever its size (no
 * limit in its file store); we read up to DP_CHECKPOINT_MAX_INPUT, far above
 * any real file. A file that cannot be read or verified (over that cap,
 * unreadable, corrupt or bad checksum) leaves the V1 holds unknown: the
 * holds we had stay, and the ledger is marked so that no device V1 serves is
 * prepared through V2 until the checkpoint reads again. */
#define V1_UNKNOWN_KEY "kubelet checkpoint"
/* node/devmgr.h DP_NODE_UNPROVEN_CONTAINER: not a DNS label, no real container has it */
#define V1_UNPROVEN_CONTAINER "devplane.unproven"

static void v1_unknown(dp_agent *a, const char *path, const char *why) {
        _cleanup_free_ char *reason =
                dp_asprintf("the V1 holds are unknown (kubelet checkpoint %s: %s), so the device may be in use "
                            "through V1; DRA prepares are refused until the checkpoint can be read",
                            path, why);
        log_error("%s: %s; V1 holds unknown: refusing DRA prepares of the devices V1 serves until it reads", path, why);
        if (!reason || dp_ledger_mark_unknown(a->ledger, V1_UNKNOWN_KEY, DP_LEDGER_V2, reason) < 0)
                log_error("cannot mark the V1 holds unknown: out of memory");
}

static bool en_mine(const dp_agent *a, const dp_ckpt_entry *en) {
        return en->resource_name && dp_v1_plan_find(a->plan, en->resource_name);
}

/* Whether this agent has read the kubelet checkpoint at path before: in
 * this process, or in an earlier one (DP_AGENT_CKPT_SEEN_FILE names it). A
 * record that cannot be read says yes: fail closed. */
static bool v1_checkpoint_seen(dp_agent *a, const char *path) {
        if (a->v1_ckpt_seen) return true;
        _cleanup_free_ char *p = dp_asprintf("%s/%s", a->state_dir, DP_AGENT_CKPT_SEEN_FILE);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        if (!p) return true;
        int r = read_small_file(p, &buf, &len);
        if (r == -ENOENT) return false;
        if (r < 0) {
                log_error("%s: %s; taken as a kubelet checkpoint read before", p, strerror(-r));
                return true;
        }
        size_t n = strlen(path);
        return len == n + 1 && strncmp(buf, path, n) == 0 && buf[n] == '\n';
}

/* The checkpoint at path was read: from now on, missing means lost. */
static void v1_checkpoint_record_seen(dp_agent *a, const char *path) {
        if (a->v1_ckpt_seen) return;
        a->v1_ckpt_seen = true;
        _cleanup_free_ char *line = dp_asprintf("%s\n", path);
        dp_error e = DP_ERROR_INIT;
        if (!line || dp_write_file_atomic(a->state_dir, DP_AGENT_CKPT_SEEN_FILE, line, strlen(line), 0644,
                                          DP_WRITE_DURABLE, &e) < 0)
                log_warning("%s/%s: cannot record that the kubelet checkpoint was read: %s", a->state_dir,
                            DP_AGENT_CKPT_SEEN_FILE, line ? dp_error_msg(&e) : "out of memory");
}

/* One checkpoint entry of ours as V1 holds, id by id (an id this agent does
 * not know leaves the others held). The node's DP_NODE_UNPROVEN_CONTAINER
 * entries name devices nobody provably holds: held by the mark, so no claim
 * gets them. Returns how many ids clash with holds of others. */
static size_t v1_replay_entry(dp_agent *a, const dp_ckpt_entry *en) {
        bool unproven = streq_ptr(en->container_name, V1_UNPROVEN_CONTAINER);
        _cleanup_free_ char *holder =
                unproven ? dp_asprintf("the node's unproven mark for pod %s (it lost its records: withheld)",
                                       en->pod_uid)
                         : dp_asprintf("pod %s/%s", en->pod_uid, en->container_name);
        size_t clashes = 0;
        if (!holder) return 0;
        for (size_t k = 0; k < en->n_device_ids; k++) {
                const dp_ckpt_ids *ids = &en->device_ids[k].ids;
                for (size_t x = 0; x < ids->n; x++) {
                        dp_error e = DP_ERROR_INIT;
                        const char *id = ids->ids[x];
                        int r = v1_hold(a, holder, &id, 1, DP_LEDGER_REPLAY, &e);
                        if (r > 0) {
                                clashes++;
                                log_error("conflict: %s (kubelet checkpoint); the device is withheld from new V1 "
                                          "allocations and new claims",
                                          dp_error_msg(&e));
                        } else if (r < 0)
                                log_warning("V1 checkpoint %s: %s", holder, dp_error_msg(&e));
                }
        }
        return clashes;
}

static void v1_sync_checkpoint(dp_agent *a) {
        if (!a->ledger) return;
        _cleanup_free_ char *path = dp_asprintf("%s/%s", a->plugin_dir, DP_CHECKPOINT_FILE_NAME);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        if (!path) return;
        if (!a->v1) { /* nothing is handed out through V1 */
                v1_holders_clear(a);
                return;
        }
        int r = read_file_max(path, DP_CHECKPOINT_MAX_INPUT, &buf, &len);
        _cleanup_(dp_checkpoint_freep) dp_checkpoint *c = NULL;
        dp_error e = DP_ERROR_INIT;
        if (r == -E2BIG) {
                _cleanup_free_ char *why =
                        dp_asprintf("larger than %u bytes (DP_CHECKPOINT_MAX_INPUT)", DP_CHECKPOINT_MAX_INPUT);
                v1_unknown(a, path, why ? why : "too large");
                return;
        }
        if (r == -EISDIR || r == -EINVAL) { /* the node's file, left alone: not a regular file */
                v1_unknown(a, path, r == -EISDIR ? "a directory, not a regular file" : "not a regular file");
                return;
        }
        if (r == -ENOENT && v1_checkpoint_seen(a, path)) {
                v1_unknown(a, path, "missing, though this agent has read it before: the record of V1 holds is lost");
                return;
        }
        if (r < 0 && r != -ENOENT) {
                v1_unknown(a, path, strerror(-r));
                return;
        }
        if (r >= 0 && dp_checkpoint_decode(buf, len, &c, &e) < 0) {
                v1_unknown(a, path, dp_error_msg(&e));
                return;
        }
        if (r >= 0) v1_checkpoint_record_seen(a, path);
        v1_holders_clear(a);
        if (dp_ledger_clear_unknown(a->ledger, V1_UNKNOWN_KEY) > 0)
                log_info("%s read: V1 holds known again, DRA prepares allowed", path);
        size_t mine = 0, clashes = 0;
        for (size_t i = 0; c && i < c->n_entries; i++)
                mine += en_mine(a, &c->entries[i]);
        log_info("%s: %zu entr%s of %zu for this agent's resources, replayed as V1 holds", path, mine,
                 mine == 1 ? "y" : "ies", c ? c->n_entries : 0);
        for (size_t i = 0; c && i < c->n_entries; i++)
                if (en_mine(a, &c->entries[i])) clashes += v1_replay_entry(a, &c->entries[i]);
        if (clashes)
                log_error("%s: %zu device(s) held by two consumers: both keep them, nobody new gets them until one "
                          "releases them (devplane_ledger_conflicts)",
                          path, clashes);
}

/* All or nothing: a refused container request releases what the earlier
 * ones of the same Allocate took, and the error names the request. */
int agent_v1_hold(dp_agent *a, const char *resource, const V1beta1__AllocateRequest *req, dp_error *err) {
        if (!a->ledger) return 0;
        size_t first = a->n_v1_holders;
        unsigned long long seq = ++a->v1_seq;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < req->n_container_requests; i++) {
                const V1beta1__ContainerAllocateRequest *q = req->container_requests[i];
                for (size_t j = 0; r >= 0 && j < i; j++) {
                        const V1beta1__ContainerAllocateRequest *p = req->container_requests[j];
                        for (size_t x = 0; r >= 0 && x < q->n_devices_ids; x++)
                                for (size_t y = 0; r >= 0 && y < p->n_devices_ids; y++)
                                        if (streq(q->devices_ids[x], p->devices_ids[y]))
                                                r = dp_error_set(err, -EBUSY,
                                                                 "container_requests[%zu]: device %s is also in "
                                                                 "container_requests[%zu] of this Allocate",
                                                                 i, q->devices_ids[x], j);
                }
                if (r < 0) break;
                _cleanup_free_ char *holder =
                        dp_asprintf("Allocate #%llu (container_requests[%zu]) of %s", seq, i, resource);
                if (!holder) {
                        r = dp_error_set(err, -ENOMEM, "out of memory");
                        break;
                }
                r = v1_hold(a, holder, (const char *const *)q->devices_ids, q->n_devices_ids, 0, err);
                if (r < 0) dp_error_prefix(err, "container_requests[%zu]", i);
        }
        if (r < 0)
                while (a->n_v1_holders > first) {
                        char *h = a->v1_holders[--a->n_v1_holders];
                        dp_ledger_release(a->ledger, h);
                        free(h);
                }
        return r;
}

/* A claim was prepared or unprepared: its devices leave or rejoin the V1
 * lists (service.c). */
static void dra_holds_changed(void *ud) {
        dp_agent *a = ud;
        if (a->v1) agent_publish_all(a);
}

/* Health changed somewhere (file or backend): V1 lists and V2 slices. */
static void health_changed(dp_agent *a) {
        int changed = dp_v1_plan_update_health(a->plan, a->set);
        if (changed > 0) agent_publish_all(a);
        if (a->dra) {
                dp_dra_inventory *inv = NULL;
                dp_error e = DP_ERROR_INIT;
                if (build_inventory(a, &inv, &e) < 0)
                        log_error("DRA inventory: %s", dp_error_msg(&e));
                else
                        (void)agent_dra_update(a->dra, inv);
        }
}

static int on_state_dir_event(dp_loop_source *s, const struct inotify_event *ev, void *ud) {
        dp_agent *a = ud;
        if (!ev->len || !streq(ev->name, DP_HEALTH_FILE_NAME)) return 0;
        if (apply_health_file(a, false) <= 0) return 0;
        health_changed(a);
        return 0;
}

static int on_backend_event(dp_loop_source *s, int fd, uint32_t events, void *ud) {
        dp_agent *a = ud;
        dp_error e = DP_ERROR_INIT;
        int r = dp_backend_dispatch(a->backend, a->set, dp_loop_now(), &e);
        if (r < 0) {
                log_error("backend %s: %s", dp_backend_kind_to_string(dp_backend_get_kind(a->backend)),
                          dp_error_msg(&e));
                return 0;
        }
        if (r == 0) return 0;
        log_info("backend: %d device(s) changed health", r);
        (void)apply_health_file(a, false); /* overrides win over the backend's view */
        health_changed(a);
        return 0;
}

/* ---- metrics ------------------------------------------------------------------------ */

static void render_metrics(dp_strbuf *o, void *ud) {
        const dp_agent *a = ud;
        size_t healthy = 0, unhealthy = 0;
        for (size_t i = 0; i < a->set->n_devices; i++) {
                const dp_hw_device *d = &a->set->devices[i];
                if (d->health == DP_HEALTH_HEALTHY)
                        healthy++;
                else
                        unhealthy++;
                for (size_t k = 0; k < d->n_migs; k++)
                        if (dp_mig_effective_health(a->set, &d->migs[k]) == DP_HEALTH_HEALTHY)
                                healthy++;
                        else
                                unhealthy++;
        }
        dp_strbuf_printf(o,
                         "# HELP devplane_devices Devices (GPUs and MIG instances) of this node by health.\n"
                         "# TYPE devplane_devices gauge\n"
                         "devplane_devices{health=\"healthy\"} %zu\ndevplane_devices{health=\"unhealthy\"} %zu\n",
                         healthy, unhealthy);
        dp_strbuf_puts(o, "# HELP devplane_v1_resource_devices Devices advertised per resource name (V1).\n"
                          "# TYPE devplane_v1_resource_devices gauge\n");
        for (size_t i = 0; a->v1 && i < a->plan->n_resources; i++) {
                const dp_v1_resource *r = &a->plan->resources[i];
                dp_strbuf_printf(o, "devplane_v1_resource_devices{resource=\"%s\",health=\"healthy\"} %zu\n", r->name,
                                 dp_v1_resource_count_healthy(r));
                dp_strbuf_printf(o, "devplane_v1_resource_devices{resource=\"%s\",health=\"unhealthy\"} %zu\n", r->name,
                                 dp_v1_resource_count(r) - dp_v1_resource_count_healthy(r));
        }
        const agent_metrics *m = &a->metrics;
        dp_strbuf_printf(o,
                         "# HELP devplane_v1_allocations_total Container requests answered by Allocate (V1).\n"
                         "# TYPE devplane_v1_allocations_total counter\ndevplane_v1_allocations_total %llu\n"
                         "# HELP devplane_dra_prepared_claims Claims prepared on this node (V2, the checkpoint).\n"
                         "# TYPE devplane_dra_prepared_claims gauge\ndevplane_dra_prepared_claims %zu\n"
                         "# HELP devplane_dra_claim_errors_total Claims NodePrepareResources answered with an error.\n"
                         "# TYPE devplane_dra_claim_errors_total counter\ndevplane_dra_claim_errors_total %llu\n"
                         "# HELP devplane_ledger_conflicts Devices held by two consumers at once (both checkpoints "
                         "name them; withheld from everyone else).\n"
                         "# TYPE devplane_ledger_conflicts gauge\ndevplane_ledger_conflicts %zu\n",
                         (unsigned long long)m->v1_allocations, agent_dra_prepared_claims(a->dra),
                         (unsigned long long)m->claim_errors, dp_ledger_conflicts(a->ledger));
        agent_dra_metrics_write(a->dra, o);
        agent_histogram_write(o, "devplane_dra_prepare_duration_seconds",
                              "NodePrepareResources calls, from request to answer.", &m->prepare);
        agent_histogram_write(o, "devplane_dra_unprepare_duration_seconds",
                              "NodeUnprepareResources calls, from request to answer.", &m->unprepare);
        dp_strbuf_printf(
                o,
                "# HELP devplane_registrations_total Successful registrations with the kubelet.\n"
                "# TYPE devplane_registrations_total counter\n"
                "devplane_registrations_total{path=\"v1\"} %llu\ndevplane_registrations_total{path=\"dra\"} %llu\n",
                (unsigned long long)a->registrations, (unsigned long long)agent_dra_registrations(a->dra));
        const dp_kube_slices *ks = agent_dra_api_slices(a->dra);
        dp_strbuf_printf(o,
                         "# HELP devplane_api_requests_total Requests to the Kubernetes API server that finished.\n"
                         "# TYPE devplane_api_requests_total counter\ndevplane_api_requests_total %llu\n"
                         "# HELP devplane_api_errors_total API requests with no answer or an unexpected status.\n"
                         "# TYPE devplane_api_errors_total counter\ndevplane_api_errors_total %llu\n"
                         "# HELP devplane_resourceslice_generation Pool generation of the published ResourceSlices.\n"
                         "# TYPE devplane_resourceslice_generation gauge\ndevplane_resourceslice_generation %lld\n"
                         "# HELP devplane_resourceslices_synced 1 when the API server holds the current slices.\n"
                         "# TYPE devplane_resourceslices_synced gauge\ndevplane_resourceslices_synced %d\n",
                         (unsigned long long)dp_kube_client_requests(a->kube),
                         (unsigned long long)dp_kube_client_errors(a->kube),
                         (long long)(ks ? dp_kube_slices_generation(ks) : agent_dra_generation(a->dra)),
                         ks ? dp_kube_slices_synced(ks) : 0);
}

/* ---- setup ------------------------------------------------------------------------- */

/* The file (or the defaults), NVIDIA's flags and environment over it, its
 * warnings logged. */
static int load_config(const dp_agent *a, dp_agent_config **ret, dp_error *err) {
        _cleanup_(dp_agent_config_freep) dp_agent_config *c = NULL;
        int r = 0;
        if (a->config_path)
                r = dp_agent_config_load_file_flags(a->config_path, a->strict_config ? DP_CONFIG_STRICT : 0, &c, err);
        else if (!(c = dp_agent_config_new_default()))
                r = -ENOMEM;
        if (r < 0) return r;
        if ((r = dp_agent_config_apply(c, a->overrides, a->n_overrides, err)) < 0) return r;
        for (size_t i = 0; i < c->n_warnings; i++)
                log_warning("%s", c->warnings[i]);
        *ret = TAKE_PTR(c);
        return 0;
}

static void render_blocked(dp_strbuf *o, void *ud) {
        (void)ud;
        dp_strbuf_puts(o, "# HELP devplane_init_failed 1 when the backend failed to start and failOnInitError is "
                          "false.\n# TYPE devplane_init_failed gauge\ndevplane_init_failed 1\n");
}

/* failOnInitError false (NVIDIA's meaning): the backend could not start, so
 * say why and stay up advertising nothing (no socket, no slice) until
 * SIGTERM, instead of exiting into a crash loop. */
static int agent_block(dp_agent *a, const dp_agent_options *o, const dp_error *why, dp_error *err) {
        log_error("%s", dp_error_msg(why));
        log_warning("failOnInitError is false: advertising nothing and waiting; restart the agent to retry");
        a->blocked = true;
        if (o->metrics_addr)
                return agent_metrics_server_new(a->loop, o->metrics_addr, render_blocked, a, &a->metrics_srv, err);
        return 0;
}

/* Make the plugin list match the plan: keep, add, remove. */
static int sync_plugins(dp_agent *a) {
        plugin **next = calloc(a->plan->n_resources + 1, sizeof *next);
        if (!next) return -ENOMEM;
        size_t n = 0;
        int r = 0;
        for (size_t i = 0; i < a->plan->n_resources; i++) {
                const char *name = a->plan->resources[i].name;
                plugin *p = NULL;
                for (size_t k = 0; k < a->n_plugins && !p; k++)
                        if (a->plugins[k] && streq(a->plugins[k]->resource, name)) {
                                p = a->plugins[k];
                                a->plugins[k] = NULL;
                        }
                if (!p) {
                        r = plugin_new(a, name, &p);
                        if (r < 0) {
                                log_error("%s: cannot serve: %s", name, strerror(-r));
                                continue;
                        }
                        p->fresh = true;
                }
                next[n++] = p;
        }
        for (size_t k = 0; k < a->n_plugins; k++)
                if (a->plugins[k]) {
                        log_info("%s is no longer exposed: closing its socket", a->plugins[k]->resource);
                        plugin_free(a->plugins[k]);
                }
        free(a->plugins);
        a->plugins = next;
        a->n_plugins = n;
        for (size_t k = 0; k < n; k++)
                if (next[k]->fresh) {
                        next[k]->fresh = false;
                        plugin_register(next[k]);
                }
        return r;
}

/* SIGHUP: the config and the devices. The backend discovers again (devglob:
 * the /dev globs; pci: sysfs; nvml: GPUs and MIG layout; mock: the
 * profile), so devices that vanished leave the V1 lists and the published
 * slices (the API publisher DELETEs slices no longer needed). Everything is
 * built before anything is replaced: on an error the running state stays. */
int dp_agent_reload(dp_agent *a, dp_error *err) {
        assert_return(a, -EINVAL);
        if (a->blocked)
                return dp_error_set(
                        err, -EAGAIN,
                        "the backend failed to start (failOnInitError is false): restart the agent to retry");
        _cleanup_(dp_agent_config_freep) dp_agent_config *cfg = NULL;
        int r = load_config(a, &cfg, err);
        if (r < 0) return r;
        _cleanup_(dp_device_set_freep) dp_device_set *set = NULL;
        if ((r = dp_backend_discover(a->backend, &set, err)) < 0) return r;
        (void)apply_health_file_to(a, set, false);
        _cleanup_(dp_v1_plan_freep) dp_v1_plan *plan = NULL;
        r = dp_v1_plan_build(set, cfg, &plan, err);
        if (r < 0) return r;
        /* MPS: keep the daemons when they serve the same; else replace them
         * before the new plan is advertised. */
        if (!agent_mps_same(a->mps, cfg, plan)) {
                a->mps = agent_mps_free(a->mps);
                if ((r = agent_mps_start(cfg, plan, set, &a->mps, err)) < 0) return r;
        }
        _cleanup_(dp_dra_inventory_freep) dp_dra_inventory *inv = NULL;
        dp_ledger *ledger = NULL;
        if (a->dra) {
                if ((r = build_inventory_of(a, set, &inv, err)) < 0) return r;
                if (!(ledger = dp_ledger_new(set, inv))) return -ENOMEM; /* copies what it needs */
        }
        size_t before = a->set->n_devices;
        dp_agent_config_free(a->cfg);
        a->cfg = TAKE_PTR(cfg);
        dp_v1_plan_free(a->plan);
        a->plan = TAKE_PTR(plan);
        if (a->dra) {
                /* Holds move to a ledger of the new devices: V2 from the
                 * driver checkpoint, V1 from the kubelet's. */
                v1_holders_clear(a);
                agent_dra_set_ledger(a->dra, ledger);
                dp_ledger_free(a->ledger);
                a->ledger = ledger;
                v1_sync_checkpoint(a);
        }
        dp_device_set_free(a->set);
        a->set = TAKE_PTR(set);
        (void)write_devices_file(a);
        if (a->dra) (void)agent_dra_update(a->dra, TAKE_PTR(inv));
        log_info("config reloaded: %zu device(s) (were %zu), %zu resource(s)", a->set->n_devices, before,
                 a->plan->n_resources);
        if (!a->v1) return 0;
        r = sync_plugins(a);
        for (size_t i = 0; i < a->n_plugins; i++)
                a->plugins[i]->sent_generation = UINT64_MAX;
        agent_publish_all(a);
        return r;
}

/* The DRA file check period: the option, else $DP_AGENT_FILE_CHECK_MS
 * (tests and tuning), else the driver's default. */
static uint64_t file_check_usec(const dp_agent_options *o) {
        if (o->file_check_ms) return (uint64_t)o->file_check_ms * 1000;
        const char *env = getenv(DP_AGENT_FILE_CHECK_ENV);
        char *end = NULL;
        unsigned long ms = env && *env ? strtoul(env, &end, 10) : 0;
        return end && !*end && ms > 0 && ms <= 86400000ul ? (uint64_t)ms * 1000 : 0;
}

/* --dra: the ledger shared by both paths (V1 holds from the kubelet's
 * checkpoint first), then the driver (agent/dra.c). */
static int start_dra(dp_agent *a, const dp_agent_options *o, dp_error *err) {
        dp_dra_inventory *inv = NULL;
        int r = build_inventory(a, &inv, err);
        if (r < 0) return r;
        a->ledger = dp_ledger_new(a->set, inv);
        if (!a->ledger) {
                dp_dra_inventory_free(inv);
                return -ENOMEM;
        }
        v1_sync_checkpoint(a);
        agent_dra_options dopt = {.node_name = a->node_name,
                                  .registry_dir = o->registry_dir,
                                  .plugins_dir = o->plugins_dir,
                                  .cdi_dir = o->cdi_dir,
                                  .slices_dir = o->slices_dir,
                                  .claims_dir = o->claims_dir,
                                  .taint_effects = o->taint_effects,
                                  .n_taint_effects = o->n_taint_effects,
                                  .kube = a->kube,
                                  .api_backoff_max_usec = o->api_backoff_max_usec,
                                  .check_usec = file_check_usec(o),
                                  .metrics = &a->metrics,
                                  .holds_changed = dra_holds_changed,
                                  .userdata = a};
        return agent_dra_new(a->loop, &dopt, a->ledger, inv, &a->dra, err);
}

int dp_agent_new(dp_loop *l, const dp_agent_options *o, dp_agent **ret, dp_error *err) {
        assert_return(l && o && o->plugin_dir && ret, -EINVAL);
        _cleanup_(dp_agent_freep) dp_agent *a = calloc(1, sizeof *a);
        if (!a) return -ENOMEM;
        a->state_lock = -1;
        char host[256] = "node";
        if (!o->node_name) (void)gethostname(host, sizeof host - 1);
        a->loop = l;
        a->plugin_dir = strdup(o->plugin_dir);
        a->state_dir = strdup(o->state_dir ? o->state_dir : DP_AGENT_DEFAULT_STATE_DIR);
        a->config_path = o->config_path ? strdup(o->config_path) : NULL;
        a->node_name = strdup(o->node_name ? o->node_name : host);
        a->allow_multiple = o->allow_multiple;
        a->overrides = o->config_overrides;
        a->n_overrides = o->n_config_overrides;
        a->strict_config = o->strict_config;
        if (!a->plugin_dir || !a->state_dir || !a->node_name || (o->config_path && !a->config_path)) return -ENOMEM;
        int r;

        /* One agent per state directory, before anything in it or in the
         * plugin directory is touched (dirlock.h). */
        if ((r = dp_mkdir_p(a->state_dir, 0755)) < 0)
                return dp_error_errno(err, r, "create state directory %s", a->state_dir);
        if ((r = agent_dir_lock(a->state_dir, AGENT_STATE_LOCK_NAME, "state directory", &a->state_lock, err)) < 0)
                return r;
        state_file_check(a->state_dir, DP_HEALTH_FILE_NAME);
        state_file_check(a->state_dir, DP_AGENT_DEVICES_FILE);

        /* Watch the plugin directory first: a kubelet.sock created while the
         * devices are being discovered is then seen as an event (the
         * callbacks run only once the loop runs, after all of this). */
        r = dp_mkdir_p(a->plugin_dir, 0750);
        if (r < 0) return dp_error_errno(err, r, "create plugin directory %s", a->plugin_dir);
        r = dp_loop_add_inotify(l, a->plugin_dir, IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_CLOSE_WRITE,
                                on_plugin_dir_event, a, &a->dir_watch);
        if (r < 0) return dp_error_errno(err, r, "watch %s", a->plugin_dir);

        dp_backend_options bo = {.node_name = a->node_name,
                                 .profile = o->profile,
                                 .config_path = o->backend_config,
                                 .sysfs_root = o->sysfs_root,
                                 .dev_root = o->dev_root,
                                 .nvml_library = o->nvml_library,
                                 .env_health = true};
        if ((r = load_config(a, &a->cfg, err)) < 0) return r;
        dp_error init_err = DP_ERROR_INIT;
        r = dp_backend_open((dp_backend_kind)o->backend, &bo, &a->backend, &init_err);
        if (r >= 0) r = dp_backend_discover(a->backend, &a->set, &init_err);
        if (r < 0 && (a->cfg->fail_on_init_error || r == -ENOMEM))
                return dp_error_set(err, r, "%s", dp_error_msg(&init_err));
        if (r < 0) {
                if ((r = agent_block(a, o, &init_err, err)) < 0) return r;
                *ret = TAKE_PTR(a);
                return 0;
        }
        (void)apply_health_file(a, true);
        if ((r = dp_v1_plan_build(a->set, a->cfg, &a->plan, err)) < 0) return r;
        a->v1 = !o->no_device_plugin;
        if (a->v1 && (r = v1_sockets_free(a, err)) < 0) return r;
        /* MPS daemons ready before anything is advertised. */
        if ((r = agent_mps_start(a->cfg, a->plan, a->set, &a->mps, err)) < 0) return r;
        (void)write_devices_file(a);

        r = dp_loop_add_inotify(l, a->state_dir, IN_CLOSE_WRITE | IN_MOVED_TO, on_state_dir_event, a, &a->state_watch);
        if (r < 0) return dp_error_errno(err, r, "watch %s", a->state_dir);
        r = dp_loop_add_io(l, dp_backend_fd(a->backend), EPOLLIN, on_backend_event, a, &a->backend_watch);
        if (r < 0) return dp_error_errno(err, r, "watch the backend");
        if (o->kubeconfig || o->in_cluster) {
                _cleanup_(dp_kube_config_freep) dp_kube_config *kc = NULL;
                r = o->kubeconfig ? dp_kube_config_load(o->kubeconfig, o->kube_context, &kc, err)
                                  : dp_kube_config_in_cluster(o->sa_dir, &kc, err);
                if (r < 0) return r;
                if ((r = dp_kube_client_new(l, kc, &a->kube)) < 0) return dp_error_errno(err, r, "API client");
                log_info("Kubernetes API %s (credentials from %s)", kc->server, kc->source);
        }
        if (o->metrics_addr &&
            (r = agent_metrics_server_new(l, o->metrics_addr, render_metrics, a, &a->metrics_srv, err)) < 0)
                return r;
        if (o->metrics_addr) log_info("metrics on http://%s/metrics", o->metrics_addr);
        if (o->dra && (r = start_dra(a, o, err)) < 0) return r;
        if (a->v1 && (r = sync_plugins(a)) < 0) return dp_error_errno(err, r, "serve in %s", a->plugin_dir);
        for (size_t i = 0; a->v1 && i < a->plan->n_resources; i++)
                log_info("serving %s: %zu devices (%zu healthy)", a->plan->resources[i].name,
                         dp_v1_resource_count(&a->plan->resources[i]),
                         dp_v1_resource_count_healthy(&a->plan->resources[i]));
        *ret = TAKE_PTR(a);
        return 0;
}

dp_agent *dp_agent_free(dp_agent *a) {
        if (!a) return NULL;
        for (size_t i = 0; i < a->n_plugins; i++)
                plugin_free(a->plugins[i]);
        free(a->plugins);
        agent_metrics_server_free(a->metrics_srv);
        agent_dra_free(a->dra);
        dp_kube_client_free(a->kube);
        if (a->ledger) v1_holders_clear(a);
        dp_ledger_free(a->ledger);
        dp_loop_source_free(a->dir_watch);
        dp_loop_source_free(a->state_watch);
        dp_loop_source_free(a->backend_watch);
        agent_mps_free(a->mps);
        dp_v1_plan_free(a->plan);
        dp_agent_config_free(a->cfg);
        dp_device_set_free(a->set);
        dp_backend_close(a->backend);
        dp_free_many(a->plugin_dir, a->state_dir, a->config_path, a->node_name);
        if (a->state_lock >= 0) close(a->state_lock); /* the lock goes last */
        free(a);
        return NULL;
}

uint64_t dp_agent_registrations(const dp_agent *a) { return a ? a->registrations : 0; }
size_t dp_agent_n_resources(const dp_agent *a) { return a && a->plan ? a->plan->n_resources : 0; }
const char *dp_agent_resource_name(const dp_agent *a, size_t i) {
        return a && a->plan && i < a->plan->n_resources ? a->plan->resources[i].name : NULL;
}

int64_t dp_agent_dra_generation(const dp_agent *a) { return a ? agent_dra_generation(a->dra) : 0; }
uint64_t dp_agent_dra_registrations(const dp_agent *a) { return a ? agent_dra_registrations(a->dra) : 0; }
int dp_agent_metrics_port(const dp_agent *a) { return a ? agent_metrics_server_port(a->metrics_srv) : 0; }
