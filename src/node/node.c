/* SPDX-License-Identifier: Apache-2.0
 * The node daemon: registration server, plugin endpoints (one ListAndWatch
 * each), the manifest directory, the scheduler tick, and writing the
 * checkpoint and status after every change. Per-container allocation is in
 * admit.c. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/log.h"
#include "devices/checkpoint.h"
#include "doc/doc.h"
#include "node/ckpt.h"
#include "node/node-internal.h"
#include "proto/proto.h"

#define DIAL_TIMEOUT_USEC (10ull * 1000 * 1000)

uint64_t node_now_ms(void) { return dp_loop_now() / 1000; }

/* ---- checkpoint and status ------------------------------------------------ */

/* Remember the outcome of one file's write: a failure is logged when it
 * starts or its reason changes, a recovery once. Returns r. */
static int note_write(char **slot, const char *what, int r, const dp_error *e) {
        if (r >= 0) {
                if (*slot) log_info("%s written again", what);
                free(*slot);
                *slot = NULL;
                return r;
        }
        const char *msg = e && e->msg[0] ? e->msg : strerror(-r);
        if (!*slot || !streq(*slot, msg))
                log_error("cannot write the %s: %s; admissions fail until it is written (retried)", what, msg);
        free(*slot);
        *slot = strdup(msg);
        if (!*slot) *slot = strdup("out of memory");
        return r;
}

/* The status is the second record of what containers hold (the stand-in's
 * container runtime): a checkpoint rebuilt after loss reads it, so it is
 * written durably too, and no pod is Running until it is on disk. */
static int write_status(dp_kubelet *n, bool running) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *root = NULL;
        dp_error e = DP_ERROR_INIT;
        if (!s || node_status_build(n, running, s, &root) < 0)
                return note_write(&n->status_write_error, "status file", dp_error_set(&e, -ENOMEM, "out of memory"),
                                  &e);
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, root, DP_DOC_JSON_PRETTY);
        dp_strbuf_putc(&sb, '\n');
        int r = dp_strbuf_failed(&sb) ? dp_error_set(&e, -ENOMEM, "out of memory")
                                      : node_write_state(n->plugin_dir, DP_NODE_STATUS_FILE, sb.buf, sb.len, 0644,
                                                         DP_WRITE_DURABLE, &e);
        return note_write(&n->status_write_error, "status file", r, &e);
}

static int write_checkpoint(dp_kubelet *n) {
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_error e = DP_ERROR_INIT;
        int r = dp_node_checkpoint_encode(n->dm, &sb);
        if (r >= 0 && dp_strbuf_failed(&sb)) r = -ENOMEM;
        if (r < 0)
                dp_error_set(&e, r, "encoding: %s", strerror(-r));
        else
                r = node_write_state(n->plugin_dir, DP_CHECKPOINT_FILE_NAME, sb.buf, sb.len, 0644, DP_WRITE_DURABLE,
                                     &e);
        return note_write(&n->ckpt_write_error, "device-manager checkpoint", r, &e);
}

static void arm_tick(dp_kubelet *n);

void node_changed(dp_kubelet *n) {
        /* while starting, nothing is written before the ledger is whole
         * (unproven marks included): the final write of dp_kubelet_new */
        if (n->stopping || n->starting) return;
        n->generation++;
        int a = write_checkpoint(n);
        int b = write_status(n, true);
        if (a >= 0 && b >= 0) {
                n->write_failures = 0;
                return;
        }
        /* retried from the tick with backoff until both are written */
        n->write_failures++;
        n->retry_at_ms =
                node_now_ms() + dp_node_backoff_ms(n->backoff_initial_ms, n->backoff_max_ms, n->write_failures);
        if (n->tick && !n->job) arm_tick(n);
}

const char *node_write_error(const dp_kubelet *n) {
        return n->ckpt_write_error ? n->ckpt_write_error : n->status_write_error;
}

bool node_flush(dp_kubelet *n, const char **why) {
        if (node_write_error(n)) node_changed(n);
        if (why) *why = node_write_error(n);
        return !node_write_error(n);
}

/* ---- scheduling ------------------------------------------------------------- */

void node_kick(dp_kubelet *n) {
        if (n->tick) dp_loop_source_set_time(n->tick, 1);
}

static void arm_tick(dp_kubelet *n) {
        uint64_t next = UINT64_MAX;
        for (size_t i = 0; i < n->n_pods; i++) {
                pod_entry *pe = n->pods[i];
                if (pe->phase == POD_PENDING)
                        next = 0;
                else if (pe->phase == POD_WAITING)
                        next = DP_MIN(next, pe->next_try_ms);
        }
        uint64_t grace;
        dp_devmgr_expire(n->dm, 0, &grace); /* now=0 drops nothing, just reports */
        next = DP_MIN(next, grace);
        if (n->ckpt_write_error || n->status_write_error) next = DP_MIN(next, n->retry_at_ms);
        if (next == UINT64_MAX)
                dp_loop_source_set_time(n->tick, 0);
        else
                dp_loop_source_set_time(n->tick, next == 0 ? 1 : next * 1000);
}

void node_schedule(dp_kubelet *n) {
        /* not while starting: the DRA manager may run the loop from
         * dp_node_dra_new(), before it exists for pods with claims */
        if (n->stopping || n->starting) return;
        uint64_t now = node_now_ms();
        if (!n->job) {
                for (size_t i = 0; i < n->n_pods; i++) {
                        pod_entry *pe = n->pods[i];
                        if (pe->phase == POD_PENDING || (pe->phase == POD_WAITING && pe->next_try_ms <= now)) {
                                node_admit_start(n, pe);
                                break;
                        }
                }
        }
        if (!n->job) arm_tick(n);
}

static void reap_endpoints(dp_kubelet *n) {
        size_t w = 0;
        for (size_t i = 0; i < n->n_eps; i++) {
                endpoint *ep = n->eps[i];
                bool busy = n->job && n->job->ep == ep;
                if (ep->dead && !ep->ch && !ep->register_call && !busy) {
                        dp_free_many(ep->resource, ep->path);
                        free(ep);
                        continue;
                }
                n->eps[w++] = ep;
        }
        n->n_eps = w;
}

static int on_tick(dp_loop_source *s, uint64_t now_usec, void *ud) {
        dp_kubelet *n = ud;
        reap_endpoints(n);
        if ((n->ckpt_write_error || n->status_write_error) && n->retry_at_ms <= now_usec / 1000)
                (void)node_flush(n, NULL);
        if (dp_devmgr_expire(n->dm, now_usec / 1000, NULL) > 0) {
                log_info("a plugin's grace period ended: its resource is removed");
                node_changed(n);
        }
        node_schedule(n);
        return 0;
}

/* ---- plugin endpoints -------------------------------------------------------- */

endpoint *node_current_endpoint(dp_kubelet *n, const char *resource) {
        for (size_t i = 0; i < n->n_eps; i++)
                if (n->eps[i]->current && !n->eps[i]->dead && streq(n->eps[i]->resource, resource)) return n->eps[i];
        return NULL;
}

static void endpoint_close(endpoint *ep) {
        if (ep->dead) return;
        ep->dead = true;
        ep->current = false;
        /* Freeing the channel completes its pending calls (UNAVAILABLE) from
         * here; their handlers see ep->dead. */
        dp_grpc_channel *ch = TAKE_PTR(ep->ch);
        dp_grpc_channel_free(ch);
        if (ep->register_call) {
                dp_grpc_call_finish(TAKE_PTR(ep->register_call), DP_GRPC_UNKNOWN, "device plugin went away");
        }
        node_kick(ep->node);
}

static void on_law_message(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *ud) {
        endpoint *ep = ud;
        dp_kubelet *n = ep->node;
        if (ep->dead || !ep->current) return;
        ProtobufCMessage *m = NULL;
        if (dp_proto_unpack(&v1beta1__list_and_watch_response__descriptor, msg, len, &m) < 0) {
                log_error("ListAndWatch %s: undecodable message, ignored", ep->resource);
                return;
        }
        const V1beta1__ListAndWatchResponse *resp = (const V1beta1__ListAndWatchResponse *)m;
        dp_nm_device *devs = calloc(resp->n_devices + 1, sizeof *devs);
        int64_t *numa = NULL;
        size_t total_numa = 0;
        for (size_t i = 0; i < resp->n_devices; i++)
                if (resp->devices[i]->topology) total_numa += resp->devices[i]->topology->n_nodes;
        numa = calloc(total_numa + 1, sizeof *numa);
        if (!devs || !numa) {
                log_error("ListAndWatch %s: out of memory", ep->resource);
                goto out;
        }
        size_t k = 0;
        for (size_t i = 0; i < resp->n_devices; i++) {
                const V1beta1__Device *d = resp->devices[i];
                devs[i].id = d->id;
                devs[i].healthy = d->health && streq(d->health, "Healthy");
                devs[i].numa = &numa[k];
                if (d->topology)
                        for (size_t j = 0; j < d->topology->n_nodes; j++)
                                if (d->topology->nodes[j]) numa[k + devs[i].n_numa++] = d->topology->nodes[j]->id;
                k += devs[i].n_numa;
        }
        dp_error e = DP_ERROR_INIT;
        if (dp_devmgr_set_devices(n->dm, ep->resource, devs, resp->n_devices, &e) < 0) {
                log_error("ListAndWatch %s: %s; message ignored", ep->resource, dp_error_msg(&e));
                goto out;
        }
        n->device_updates++;
        log_debug("ListAndWatch %s: %zu devices, %zu healthy", ep->resource, resp->n_devices,
                  dp_devmgr_allocatable(n->dm, ep->resource));
        node_changed(n);
        node_kick(n);
out:
        dp_free_many(devs, numa);
        protobuf_c_message_free_unpacked(m, NULL);
}

static void on_law_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        endpoint *ep = ud;
        dp_kubelet *n = ep->node;
        ep->law_call = NULL;
        if (ep->dead || !ep->current) return;
        log_warning("ListAndWatch %s ended (%s%s%s): devices kept as unhealthy for the grace period", ep->resource,
                    dp_grpc_status_name(status), *message ? ": " : "", message);
        dp_devmgr_disconnected(n->dm, ep->resource, node_now_ms());
        endpoint_close(ep);
        node_changed(n);
        node_kick(n);
}

static void on_options_message(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *ud) {
        endpoint *ep = ud;
        ProtobufCMessage *m = NULL;
        if (dp_proto_unpack(&v1beta1__device_plugin_options__descriptor, msg, len, &m) < 0) return;
        const V1beta1__DevicePluginOptions *o = (const V1beta1__DevicePluginOptions *)m;
        ep->opts.pre_start_required = o->pre_start_required;
        ep->opts.get_preferred_allocation_available = o->get_preferred_allocation_available;
        protobuf_c_message_free_unpacked(m, NULL);
}

static void on_options_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        endpoint *ep = ud;
        dp_kubelet *n = ep->node;
        ep->options_call = NULL;
        if (ep->dead) return;
        if (status != DP_GRPC_OK) {
                log_error("Register %s: GetDevicePluginOptions failed: %s: %s", ep->resource,
                          dp_grpc_status_name(status), message);
                if (ep->register_call)
                        dp_grpc_call_finishf(TAKE_PTR(ep->register_call), DP_GRPC_UNKNOWN,
                                             "failed to get device plugin options: %s", message);
                endpoint_close(ep);
                return;
        }
        /* This endpoint replaces any older one of the resource. */
        for (size_t i = 0; i < n->n_eps; i++) {
                endpoint *old = n->eps[i];
                if (old != ep && !old->dead && streq(old->resource, ep->resource)) endpoint_close(old);
        }
        int r = dp_devmgr_register(n->dm, ep->resource, ep->path + strlen(n->plugin_dir) + 1, &ep->opts);
        if (r < 0) {
                if (ep->register_call)
                        dp_grpc_call_finish(TAKE_PTR(ep->register_call), DP_GRPC_UNKNOWN, "out of memory");
                endpoint_close(ep);
                return;
        }
        ep->current = true;
        n->registrations++;
        log_info("registered device plugin for %s at %s (preStartRequired=%s, getPreferredAllocationAvailable=%s)",
                 ep->resource, ep->path, ep->opts.pre_start_required ? "true" : "false",
                 ep->opts.get_preferred_allocation_available ? "true" : "false");
        if (ep->register_call) {
                V1beta1__Empty empty = V1BETA1__EMPTY__INIT;
                dp_grpc_call_reply_msg(TAKE_PTR(ep->register_call), &empty.base);
        }
        r = dp_grpc_channel_start_call(ep->ch, "/v1beta1.DevicePlugin/ListAndWatch", NULL, 0, 0, on_law_message,
                                       on_law_done, ep, &ep->law_call);
        if (r < 0) {
                log_error("ListAndWatch %s: cannot start: %s", ep->resource, strerror(-r));
                dp_devmgr_disconnected(n->dm, ep->resource, node_now_ms());
                endpoint_close(ep);
        }
        node_changed(n);
}

static void on_register_cancel(dp_grpc_call *call, int status, void *ud) {
        endpoint *ep = ud;
        if (ep->register_call == call) ep->register_call = NULL;
        dp_grpc_call_finish(call, DP_GRPC_CANCELLED, NULL);
}

static void on_register(dp_grpc_call *call, void *ud) {
        dp_kubelet *n = ud;
        const V1beta1__RegisterRequest *req = (const V1beta1__RegisterRequest *)dp_grpc_call_request_msg(call);
        dp_error e = DP_ERROR_INIT;
        if (n->stopping) {
                dp_grpc_call_finish(call, DP_GRPC_UNAVAILABLE, "shutting down");
                return;
        }
        if (dp_devmgr_validate_register(req->version, req->resource_name, req->endpoint, &e) < 0) {
                log_error("Register refused: %s", e.msg);
                dp_grpc_call_finish(call, DP_GRPC_UNKNOWN, e.msg);
                return;
        }
        endpoint *ep = calloc(1, sizeof *ep);
        endpoint **eps = realloc(n->eps, (n->n_eps + 1) * sizeof *eps);
        if (eps) n->eps = eps;
        if (!ep || !eps || !(ep->resource = strdup(req->resource_name)) ||
            !(ep->path = dp_asprintf("%s/%s", n->plugin_dir, req->endpoint))) {
                if (ep) free(ep->resource);
                free(ep);
                dp_grpc_call_finish(call, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        ep->node = n;
        n->eps[n->n_eps++] = ep;
        int r = dp_grpc_channel_connect_unix(n->loop, ep->path, &ep->ch);
        if (r < 0) {
                log_error("Register %s: cannot dial %s: %s", ep->resource, ep->path, strerror(-r));
                dp_grpc_call_finishf(call, DP_GRPC_UNKNOWN, "failed to dial device plugin at %s: %s", req->endpoint,
                                     strerror(-r));
                ep->dead = true;
                return;
        }
        r = dp_grpc_channel_start_call(ep->ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0,
                                       DIAL_TIMEOUT_USEC, on_options_message, on_options_done, ep, &ep->options_call);
        if (r < 0) {
                dp_grpc_call_finishf(call, DP_GRPC_UNKNOWN, "failed to call GetDevicePluginOptions: %s", strerror(-r));
                endpoint_close(ep);
                return;
        }
        ep->register_call = call;
        dp_grpc_call_set_cancel_handler(call, on_register_cancel, ep);
}

/* ---- manifests ------------------------------------------------------------- */

const char *node_pod_phase_name(pod_phase p) {
        switch (p) {
        case POD_PENDING: return "Pending";
        case POD_ADMITTING: return "Admitting";
        case POD_WAITING: return "Waiting";
        case POD_CLAIMS: return "WaitingForClaims";
        case POD_RUNNING: return "Running";
        }
        return "Unknown";
}

static void pod_entry_free(pod_entry *pe) {
        if (!pe) return;
        dp_node_pod_free(pe->pod);
        free(pe->message);
        free(pe);
}

static void merrs_clear(manifest_error *m, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_free_many(m[i].file, m[i].message);
        free(m);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void manifests_rescan(dp_kubelet *n) {
        if (!n->manifests_dir) return;
        DIR *d = opendir(n->manifests_dir);
        if (!d) {
                log_error("cannot read manifest directory %s: %m", n->manifests_dir);
                return;
        }
        char **names = NULL;
        size_t n_names = 0;
        for (struct dirent *de; (de = readdir(d));) {
                if (!dp_node_is_manifest_name(de->d_name)) continue;
                char **nn = realloc(names, (n_names + 1) * sizeof *nn);
                if (!nn) break;
                names = nn;
                if ((names[n_names] = strdup(de->d_name))) n_names++;
        }
        closedir(d);
        if (n_names) qsort(names, n_names, sizeof *names, cmp_str);

        dp_node_pod **fresh = NULL;
        size_t n_fresh = 0;
        manifest_error *merrs = NULL;
        size_t n_merrs = 0;
        for (size_t i = 0; i < n_names; i++) {
                _cleanup_free_ char *path = dp_asprintf("%s/%s", n->manifests_dir, names[i]);
                dp_node_pod **pods = NULL;
                size_t np = 0;
                dp_error e = DP_ERROR_INIT;
                int r = path ? dp_node_pods_load_file(path, &pods, &np, &e) : -ENOMEM;
                if (r == -ENOENT) continue; /* removed while we scanned */
                for (size_t j = 0; r >= 0 && j < np; j++)
                        for (size_t k = 0; k < n_fresh && r >= 0; k++)
                                if (streq(fresh[k]->ns, pods[j]->ns) && streq(fresh[k]->name, pods[j]->name))
                                        r = dp_error_set(&e, -EINVAL,
                                                         "%s: Pod %s/%s: metadata.name: Duplicate value (also in %s)",
                                                         path, pods[j]->ns, pods[j]->name, fresh[k]->source);
                dp_node_pod **nf = r >= 0 ? realloc(fresh, (n_fresh + np + 1) * sizeof *nf) : NULL;
                if (r >= 0 && !nf) r = -ENOMEM;
                if (r < 0) {
                        dp_node_pods_free(pods, np);
                        manifest_error *nm = realloc(merrs, (n_merrs + 1) * sizeof *nm);
                        if (!nm) continue;
                        merrs = nm;
                        merrs[n_merrs].file = strdup(names[i]);
                        merrs[n_merrs].message = strdup(r == -ENOMEM ? "out of memory" : dp_error_msg(&e));
                        n_merrs++;
                        continue;
                }
                fresh = nf;
                for (size_t j = 0; j < np; j++)
                        fresh[n_fresh++] = pods[j];
                free(pods);
        }
        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        free(names);

        /* report errors not reported before */
        for (size_t i = 0; i < n_merrs; i++) {
                bool old = false;
                for (size_t j = 0; j < n->n_merrs && !old; j++)
                        old = streq_ptr(n->merrs[j].message, merrs[i].message);
                if (!old) log_error("manifest %s", merrs[i].message ? merrs[i].message : "?");
        }
        merrs_clear(n->merrs, n->n_merrs);
        n->merrs = merrs;
        n->n_merrs = n_merrs;

        bool changed = false;
        for (size_t i = 0; i < n->n_pods; i++)
                n->pods[i]->seen = false;
        for (size_t j = 0; j < n_fresh; j++) {
                pod_entry *found = NULL;
                for (size_t i = 0; i < n->n_pods && !found; i++)
                        if (streq(n->pods[i]->pod->uid, fresh[j]->uid)) found = n->pods[i];
                if (found) {
                        found->seen = true;
                        dp_node_pod_free(fresh[j]);
                        continue;
                }
                pod_entry *pe = calloc(1, sizeof *pe);
                pod_entry **np = realloc(n->pods, (n->n_pods + 1) * sizeof *np);
                if (np) n->pods = np;
                if (!pe || !np) {
                        free(pe);
                        dp_node_pod_free(fresh[j]);
                        continue;
                }
                pe->pod = fresh[j];
                pe->phase = POD_PENDING;
                pe->seen = true;
                n->pods[n->n_pods++] = pe;
                log_info("pod %s/%s (uid %s) added from %s", pe->pod->ns, pe->pod->name, pe->pod->uid, pe->pod->source);
                changed = true;
        }
        free(fresh);
        size_t w = 0;
        for (size_t i = 0; i < n->n_pods; i++) {
                pod_entry *pe = n->pods[i];
                if (pe->seen) {
                        n->pods[w++] = pe;
                        continue;
                }
                if (n->job && n->job->pe == pe) node_admit_abort(n);
                size_t rel = dp_devmgr_release_pod(n->dm, pe->pod->uid);
                log_info("pod %s/%s removed: %zu allocation(s) released", pe->pod->ns, pe->pod->name, rel);
                pod_entry_free(pe);
                changed = true;
        }
        n->n_pods = w;
        if (changed || n_merrs) node_changed(n);
        dp_node_dra_rescan(n->dra);
        node_kick(n);
}

static void on_dra_changed(void *ud) {
        dp_kubelet *n = ud;
        if (n->stopping) return;
        for (size_t i = 0; i < n->n_pods; i++)
                if (n->pods[i]->phase == POD_CLAIMS) (void)node_admit_claims(n, n->pods[i]);
        node_changed(n);
}

/* Why V1's holds are not on disk for drivers to read (dp_node_dra_options). */
static const char *v1_unrecorded(void *ud) {
        const dp_kubelet *n = ud;
        if (n->ckpt_write_error) return n->ckpt_write_error;
        if (!dp_devmgr_withheld_known(n->dm))
                return "the devices that pods whose holdings cannot be proven may hold are not known until their "
                       "device plugin lists them";
        return NULL;
}

static int on_manifest_event(dp_loop_source *s, const struct inotify_event *ev, void *ud) {
        dp_kubelet *n = ud;
        if (ev->len && !dp_node_is_manifest_name(ev->name)) return 0;
        manifests_rescan(n);
        return 0;
}

/* ---- setup ------------------------------------------------------------------- */

/* The plugin directory is created, locked (one node per directory: a second
 * one must not remove the first one's sockets), then cleared of sockets. */
static int prepare_dir(dp_kubelet *n, dp_error *err) {
        const char *dir = n->plugin_dir;
        if (mkdir(dir, 0750) < 0 && errno != EEXIST) return dp_error_errno(err, -errno, "create %s", dir);
        int r = node_lock(n, err);
        if (r < 0) return r;
        DIR *d = opendir(dir);
        if (!d) return dp_error_errno(err, -errno, "open %s", dir);
        for (struct dirent *de; (de = readdir(d));) {
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
                if (!S_ISSOCK(st.st_mode)) continue;
                if (unlinkat(dirfd(d), de->d_name, 0) == 0) log_info("removed stale socket %s/%s", dir, de->d_name);
        }
        closedir(d);
        return 0;
}

int dp_kubelet_new(dp_loop *l, const dp_node_config *cfg, dp_kubelet **ret, dp_error *err) {
        assert_return(l && cfg && cfg->plugin_dir && ret, -EINVAL);
        _cleanup_(dp_kubelet_freep) dp_kubelet *n = calloc(1, sizeof *n);
        if (!n) return -ENOMEM;
        char host[256] = "node";
        if (!cfg->node_name) (void)gethostname(host, sizeof host - 1);
        n->loop = l;
        n->plugin_dir = strdup(cfg->plugin_dir);
        n->manifests_dir = cfg->manifests_dir ? strdup(cfg->manifests_dir) : NULL;
        n->node_name = strdup(cfg->node_name ? cfg->node_name : host);
        n->backoff_initial_ms = cfg->backoff_initial_ms ? cfg->backoff_initial_ms : 1000;
        n->backoff_max_ms = cfg->backoff_max_ms ? cfg->backoff_max_ms : 10000;
        n->dm = dp_devmgr_new();
        n->lock_fd = -1;
        n->starting = true;
        if (!n->plugin_dir || !n->node_name || !n->dm || (cfg->manifests_dir && !n->manifests_dir)) return -ENOMEM;
        size_t pl = strlen(n->plugin_dir);
        while (pl > 1 && n->plugin_dir[pl - 1] == '/')
                n->plugin_dir[--pl] = 0;

        int r = prepare_dir(n, err);
        if (r < 0) return r;
        if ((r = node_load_checkpoint(n, err)) < 0) return r;
        if (n->manifests_dir) {
                struct stat st;
                if (stat(n->manifests_dir, &st) < 0 || !S_ISDIR(st.st_mode))
                        return dp_error_set(err, -EINVAL, "--manifests %s: not a directory", n->manifests_dir);
                r = dp_loop_add_inotify(l, n->manifests_dir,
                                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE,
                                        on_manifest_event, n, &n->manifest_watch);
                if (r < 0) return dp_error_errno(err, r, "watch %s", n->manifests_dir);
        }
        r = dp_loop_add_timer(l, 0, on_tick, n, &n->tick);
        if (r < 0) return dp_error_errno(err, r, "timer");
        manifests_rescan(n);
        if ((r = node_mark_unproven(n)) < 0) return dp_error_set(err, r, "out of memory");
        node_release_orphans(n);
        /* The V1 ledger is on disk before the DRA manager may prepare
         * anything: drivers learn V1's holds from the checkpoint. */
        (void)write_checkpoint(n);
        if (cfg->registry_dir) {
                dp_node_dra_options dopt = {.registry_dir = cfg->registry_dir,
                                         .manifests_dir = n->manifests_dir,
                                         .claims_dir = cfg->claims_dir,
                                         .cdi_dir = cfg->cdi_dir,
                                         .state_dir = n->plugin_dir,
                                         .backoff_initial_ms = n->backoff_initial_ms,
                                         .backoff_max_ms = n->backoff_max_ms,
                                         .changed = on_dra_changed,
                                         .v1_unrecorded = v1_unrecorded,
                                         .userdata = n};
                if ((r = dp_node_dra_new(l, &dopt, &n->dra, err)) < 0) return r;
                dp_node_dra_rescan(n->dra);
        }

        if ((r = dp_grpc_server_new(&n->srv)) < 0) return dp_error_errno(err, r, "grpc server");
        r = dp_grpc_server_add_method(n->srv, "/v1beta1.Registration/Register", DP_GRPC_UNARY,
                                      &v1beta1__register_request__descriptor, on_register, n);
        if (r < 0) return dp_error_errno(err, r, "grpc server");
        _cleanup_free_ char *sock = dp_asprintf("%s/%s", n->plugin_dir, DP_NODE_KUBELET_SOCKET);
        if (!sock) return -ENOMEM;
        r = dp_grpc_server_listen_unix(n->srv, l, sock, 0600);
        if (r < 0) return dp_error_errno(err, r, "listen on %s", sock);
        log_info("node %s serving %s", n->node_name, sock);
        n->starting = false;
        node_mark_served(n);
        node_changed(n);
        node_kick(n);
        *ret = TAKE_PTR(n);
        return 0;
}

dp_kubelet *dp_kubelet_free(dp_kubelet *n) {
        if (!n) return NULL;
        n->dra = dp_node_dra_free(n->dra);
        bool started = n->srv != NULL;
        if (n->job) node_admit_abort(n);
        n->stopping = true;
        n->srv = dp_grpc_server_free(n->srv); /* unlinks kubelet.sock */
        for (size_t i = 0; i < n->n_eps; i++)
                endpoint_close(n->eps[i]);
        n->stopping = false;
        if (started) (void)write_status(n, false);
        n->stopping = true;
        for (size_t i = 0; i < n->n_eps; i++)
                dp_free_many(n->eps[i]->resource, n->eps[i]->path, n->eps[i]);
        free(n->eps);
        for (size_t i = 0; i < n->n_pods; i++)
                pod_entry_free(n->pods[i]);
        free(n->pods);
        merrs_clear(n->merrs, n->n_merrs);
        dp_loop_source_free(n->manifest_watch);
        dp_loop_source_free(n->tick);
        dp_devmgr_free(n->dm);
        dp_free_many(n->checkpoint_error, n->ckpt_write_error, n->status_write_error);
        if (n->lock_fd >= 0) close(n->lock_fd);
        dp_free_many(n->plugin_dir, n->manifests_dir, n->node_name);
        free(n);
        return NULL;
}

size_t dp_kubelet_n_pods(const dp_kubelet *n) { return n ? n->n_pods : 0; }
size_t dp_kubelet_n_pods_running(const dp_kubelet *n) {
        size_t c = 0;
        for (size_t i = 0; n && i < n->n_pods; i++)
                c += n->pods[i]->phase == POD_RUNNING;
        return c;
}
size_t dp_kubelet_capacity(const dp_kubelet *n, const char *resource) {
        return n ? dp_devmgr_capacity(n->dm, resource) : 0;
}
size_t dp_kubelet_allocatable(const dp_kubelet *n, const char *resource) {
        return n ? dp_devmgr_allocatable(n->dm, resource) : 0;
}
bool dp_kubelet_resource_connected(const dp_kubelet *n, const char *resource) {
        const dp_nm_resource *r = n ? dp_devmgr_resource(n->dm, resource) : NULL;
        return r && r->connected;
}
uint64_t dp_kubelet_registrations(const dp_kubelet *n) { return n ? n->registrations : 0; }
uint64_t dp_kubelet_device_updates(const dp_kubelet *n) { return n ? n->device_updates : 0; }
