/* SPDX-License-Identifier: Apache-2.0
 * dra-plugins.c — the DRA manager's drivers (see dra-internal.h): the plugin
 * watcher and registration, the device health streams, and devplane's
 * PreparedClaims List after each registration, merged into the node's DRA
 * state. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "devplane-dra/v1/api.pb-c.h"
#include "node/dra-internal.h"

/* The kubelet's deadlines (wire-protocols.md 3.6, 4.3). */
#define GETINFO_TIMEOUT_USEC (1ull * 1000 * 1000)
#define NOTIFY_TIMEOUT_USEC (5ull * 1000 * 1000)
/* devplane's PreparedClaims List (proto/devplane-dra/v1/api.proto). */
#define LIST_PATH "/devplane.dra.v1.PreparedClaims/List"
#define LIST_TIMEOUT_USEC (5ull * 1000 * 1000)

/* ---- plugin watcher --------------------------------------------------------------- */

static void health_stop(health_watch *w);

void dra_plugin_clear(plugin_ent *p) {
        health_stop(p->hw);
        dp_free_many(p->sock, p->driver, p->endpoint, p->error);
        *p = (plugin_ent){0};
}

const plugin_ent *dra_plugin_for(const dp_node_dra *d, const char *driver) {
        for (size_t i = 0; i < d->n_plugins; i++)
                if (d->plugins[i].ok && d->plugins[i].driver && streq(d->plugins[i].driver, driver))
                        return &d->plugins[i];
        return NULL;
}

static void notify_status(dp_grpc_channel *ch, bool ok, const char *error) {
        Pluginregistration__RegistrationStatus st = PLUGINREGISTRATION__REGISTRATION_STATUS__INIT;
        st.plugin_registered = ok;
        st.error = (char *)(error ? error : "");
        _cleanup_grpc_reply_ dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
        dp_error e = DP_ERROR_INIT;
        if (dp_grpc_channel_call_sync_msg(ch, "/pluginregistration.Registration/NotifyRegistrationStatus", &st.base,
                                          &pluginregistration__registration_status_response__descriptor,
                                          NOTIFY_TIMEOUT_USEC, &rep, &e) < 0 &&
            ok)
                log_warning("NotifyRegistrationStatus: %s", dp_error_msg(&e));
}

/* ---- device health (NodeWatchResources) ------------------------------------------- */

static void health_devs_clear(health_watch *w) {
        for (size_t i = 0; i < w->n_devs; i++)
                dp_free_many(w->devs[i].pool, w->devs[i].device, w->devs[i].message);
        free(w->devs);
        w->devs = NULL;
        w->n_devs = 0;
}

static void health_free(health_watch *w) {
        if (!w) return;
        if (w->call) dp_grpc_client_call_cancel(TAKE_PTR(w->call));
        dp_grpc_channel_free(w->ch);
        health_devs_clear(w);
        dp_free_many(w->driver, w->endpoint, w->state);
        free(w);
}

static void health_set_state(health_watch *w, const char *fmt, ...) _printf_(2, 3);
static void health_set_state(health_watch *w, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *s = dp_vasprintf(fmt, ap);
        va_end(ap);
        free(w->state);
        w->state = s;
}

/* One NodeWatchResourcesResponse (v1 and v1alpha1 share the wire) into
 * health_dev entries: devices without a name are dropped, messages cut at
 * 1024 characters (the API's limit), health values outside the enum kept
 * as Unknown. dp_proto_unpack()'s errors (-EBADMSG: it does not decode). */
static int health_decode(const uint8_t *msg, size_t len, health_dev **ret, size_t *ret_n) {
        V1alpha1__NodeWatchResourcesResponse *resp = NULL;
        int r = dp_proto_unpack(&v1alpha1__node_watch_resources_response__descriptor, msg, len,
                                (ProtobufCMessage **)&resp);
        /* a string that is not UTF-8 (as protobuf-go refuses it) or an
         * oversized message: undecodable, like any other bad bytes */
        if (r == -EILSEQ || r == -E2BIG) return -EBADMSG;
        if (r < 0) return r;
        health_dev *v = calloc(resp->n_devices + 1, sizeof *v);
        size_t n = 0;
        for (size_t i = 0; v && i < resp->n_devices; i++) {
                const V1alpha1__DeviceHealth *h = resp->devices[i];
                if (!h->device || !h->device->device_name || !*h->device->device_name) continue;
                health_dev *e = &v[n++];
                e->pool = strdup(h->device->pool_name ? h->device->pool_name : "");
                e->device = strdup(h->device->device_name);
                e->message = strndup(h->message ? h->message : "", 1024);
                e->health =
                        h->health == V1ALPHA1__HEALTH_STATUS__HEALTHY || h->health == V1ALPHA1__HEALTH_STATUS__UNHEALTHY
                                ? (int)h->health
                                : V1ALPHA1__HEALTH_STATUS__UNKNOWN;
                e->updated = h->last_updated_time;
                if (!e->pool || !e->device || !e->message) {
                        dp_free_many(e->pool, e->device, e->message);
                        n--;
                }
        }
        v1alpha1__node_watch_resources_response__free_unpacked(resp, NULL);
        if (!v) return -ENOMEM;
        *ret = v;
        *ret_n = n;
        return 0;
}

int dp_node_dra_health_decode(const uint8_t *msg, size_t len, size_t *n_devices, size_t *n_unhealthy) {
        health_dev *v = NULL;
        size_t n = 0;
        int r = health_decode(msg, len, &v, &n);
        if (r < 0) return r;
        *n_devices = n;
        *n_unhealthy = 0;
        for (size_t i = 0; i < n; i++) {
                *n_unhealthy += v[i].health == V1ALPHA1__HEALTH_STATUS__UNHEALTHY;
                dp_free_many(v[i].pool, v[i].device, v[i].message);
        }
        free(v);
        return 0;
}

/* A complete list of the driver's devices with their health, on open and on
 * every change (the agent's and the kubelet's contract). */
static void on_health_message(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *ud) {
        health_watch *w = ud;
        (void)cc;
        health_dev *v = NULL;
        size_t n = 0;
        int r = health_decode(msg, len, &v, &n);
        if (r < 0) {
                log_warning("NodeWatchResources %s: %s, ignored", w->driver,
                            r == -EBADMSG ? "undecodable message" : strerror(-r));
                return;
        }
        size_t unhealthy = 0;
        for (size_t i = 0; i < n; i++)
                unhealthy += v[i].health == V1ALPHA1__HEALTH_STATUS__UNHEALTHY;
        for (size_t i = 0; i < n; i++) {
                const health_dev *old = NULL;
                for (size_t k = 0; k < w->n_devs && !old; k++)
                        if (streq(w->devs[k].device, v[i].device) && streq(w->devs[k].pool, v[i].pool))
                                old = &w->devs[k];
                if ((old ? old->health : V1ALPHA1__HEALTH_STATUS__HEALTHY) != v[i].health)
                        log_info("DRA driver %s: device %s/%s is %s%s%s", w->driver, v[i].pool, v[i].device,
                                 v[i].health == V1ALPHA1__HEALTH_STATUS__HEALTHY     ? "healthy"
                                 : v[i].health == V1ALPHA1__HEALTH_STATUS__UNHEALTHY ? "unhealthy"
                                                                                     : "of unknown health",
                                 *v[i].message ? ": " : "", v[i].message);
        }
        health_devs_clear(w);
        w->devs = v;
        w->n_devs = n;
        w->attempts = 0;
        health_set_state(w, "watching: %zu devices, %zu unhealthy", n, unhealthy);
        dra_notify_changed(w->d);
}

static void on_health_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        health_watch *w = ud;
        (void)cc;
        w->call = NULL;
        w->streaming = false;
        if (status == 12 /* UNIMPLEMENTED */) {
                health_set_state(w, "not served by the plugin");
                log_info("DRA driver %s does not serve NodeWatchResources", w->driver);
        } else {
                /* What was reported stays, marked as from an ended stream; the
                 * stream is opened again with backoff. */
                health_set_state(w, "ended: %s (status %d); reconnecting", message && *message ? message : "closed",
                                 status);
                log_warning("NodeWatchResources %s ended: %s (status %d)", w->driver, message ? message : "", status);
                w->attempts++;
                w->next_try = dp_loop_now() + dra_backoff_usec(w->d, w->attempts);
                dra_arm_timer(w->d);
        }
        dra_notify_changed(w->d);
}

void dra_health_open(health_watch *w) {
        w->next_try = 0;
        w->ch = dp_grpc_channel_free(w->ch);
        int r = dp_grpc_channel_connect_unix(w->d->loop, w->endpoint, &w->ch);
        if (r >= 0) {
                V1alpha1__NodeWatchResourcesRequest req = V1ALPHA1__NODE_WATCH_RESOURCES_REQUEST__INIT;
                uint8_t buf[16];
                size_t len = v1alpha1__node_watch_resources_request__pack(&req, buf);
                r = dp_grpc_channel_start_call(w->ch, w->path, buf, len, 0, on_health_message, on_health_done, w,
                                               &w->call);
        }
        if (r < 0) {
                health_set_state(w, "cannot open: %s; retrying", strerror(-r));
                w->attempts++;
                w->next_try = dp_loop_now() + dra_backoff_usec(w->d, w->attempts);
                return;
        }
        w->streaming = true;
        health_set_state(w, "watching");
}

/* After a registration: watch the driver's health when GetInfo listed a
 * DRAResourceHealth version. */
static void health_start(dp_node_dra *d, plugin_ent *p) {
        health_stop(p->hw);
        p->hw = NULL;
        if (!p->health_path) return;
        health_watch *w = calloc(1, sizeof *w);
        if (!w || !(w->driver = strdup(p->driver)) || !(w->endpoint = strdup(p->endpoint))) {
                health_free(w);
                return;
        }
        w->d = d;
        w->path = p->health_path;
        p->hw = w;
        dra_health_open(w);
}

/* Stop watching. A call in progress is cancelled: no callback follows. */
static void health_stop(health_watch *w) { health_free(w); }

/* One attempt: 0 registered, -EAGAIN retry soon, other: failed (p->error). */
static int plugin_try(dp_node_dra *d, plugin_ent *p) {
        _cleanup_(dp_grpc_channel_freep) dp_grpc_channel *ch = NULL;
        int r = dp_grpc_channel_connect_unix(d->loop, p->sock, &ch);
        if (r == -ECONNREFUSED || r == -EAGAIN) return -EAGAIN;
        if (r < 0) {
                free(p->error);
                p->error = dp_asprintf("connect: %s", strerror(-r));
                return r;
        }
        Pluginregistration__InfoRequest ir = PLUGINREGISTRATION__INFO_REQUEST__INIT;
        _cleanup_grpc_reply_ dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
        dp_error e = DP_ERROR_INIT;
        r = dp_grpc_channel_call_sync_msg(ch, "/pluginregistration.Registration/GetInfo", &ir.base,
                                          &pluginregistration__plugin_info__descriptor, GETINFO_TIMEOUT_USEC, &rep, &e);
        if (r == -ENOTCONN) return -EAGAIN;
        if (r < 0) {
                free(p->error);
                p->error = strdup(dp_error_msg(&e));
                return r;
        }
        const Pluginregistration__PluginInfo *info = (const Pluginregistration__PluginInfo *)rep.msg;
        _cleanup_free_ char *why = NULL;
        const char *prefix = NULL, *version = NULL;
        if (!info->type || !streq(info->type, "DRAPlugin"))
                why = dp_asprintf("no handler registered for plugin type: %s", info->type ? info->type : "");
        else if (!info->name || !*info->name)
                why = strdup("plugin name is empty");
        else {
                for (size_t i = 0; i < info->n_supported_versions && !prefix; i++) {
                        if (streq(info->supported_versions[i], "v1.DRAPlugin")) {
                                prefix = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/";
                                version = "v1.DRAPlugin";
                        } else if (streq(info->supported_versions[i], "v1beta1.DRAPlugin")) {
                                prefix = "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/";
                                version = "v1beta1.DRAPlugin";
                        }
                }
                p->health_path = NULL;
                for (size_t i = 0; i < info->n_supported_versions; i++) {
                        if (streq(info->supported_versions[i], "v1.DRAResourceHealth"))
                                p->health_path = "/v1.DRAResourceHealth/NodeWatchResources";
                        else if (streq(info->supported_versions[i], "v1alpha1.DRAResourceHealth") && !p->health_path)
                                p->health_path = "/v1alpha1.DRAResourceHealth/NodeWatchResources";
                }
                if (!prefix)
                        why = dp_asprintf("none of the versions %s supports is supported by the kubelet (v1.DRAPlugin, "
                                          "v1beta1.DRAPlugin)",
                                          info->n_supported_versions ? "the plugin" : "(empty list)");
                else {
                        for (size_t i = 0; i < d->n_plugins; i++)
                                if (&d->plugins[i] != p && d->plugins[i].ok &&
                                    streq(d->plugins[i].driver, info->name) && !streq(d->plugins[i].sock, p->sock))
                                        log_info("DRA driver %s: newer registration %s replaces %s", info->name,
                                                 p->sock, d->plugins[i].sock);
                }
        }
        if (why) {
                notify_status(ch, false, why);
                free(p->error);
                p->error = TAKE_PTR(why);
                return -EINVAL;
        }
        dp_free_many(p->driver, p->endpoint);
        p->driver = strdup(info->name);
        p->endpoint = strdup(info->endpoint && *info->endpoint ? info->endpoint : p->sock);
        if (!p->driver || !p->endpoint) return -ENOMEM;
        p->prefix = prefix;
        p->version = version;
        notify_status(ch, true, NULL);
        p->ok = true;
        free(p->error);
        p->error = NULL;
        log_info("DRA driver %s registered: endpoint %s, %s", p->driver, p->endpoint, version);
        return 0;
}

void dra_plugin_attempt(dp_node_dra *d, plugin_ent *p) {
        p->next_try = 0;
        d->in_call++;
        int r = plugin_try(d, p);
        d->in_call--;
        if (r == -EAGAIN && p->retries < DP_GRPC_SOCKET_RETRY_MAX) {
                p->next_try = dp_loop_now() + dp_grpc_socket_retry_delay(p->retries);
                p->retries++;
                return;
        }
        if (r < 0) {
                p->ok = false;
                health_stop(p->hw); /* the health of a driver that is not registered is not watched */
                p->hw = NULL;
                log_warning("plugin %s not registered: %s", p->sock, p->error ? p->error : strerror(-r));
                return;
        }
        health_start(d, p);
        /* Every registration: what does the driver hold? */
        p->list_pending = true;
        p->list_attempts = 0;
        dra_plugin_list(d, p);
}

static plugin_ent *plugin_find_sock(dp_node_dra *d, const char *sock) {
        for (size_t i = 0; i < d->n_plugins; i++)
                if (streq(d->plugins[i].sock, sock)) return &d->plugins[i];
        return NULL;
}

void dra_socket_added(dp_node_dra *d, const char *name) {
        if (name[0] == '.') return;
        _cleanup_free_ char *path = dp_asprintf("%s/%s", d->registry_dir, name);
        if (!path) return;
        struct stat st;
        if (stat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) return;
        plugin_ent *p = plugin_find_sock(d, path);
        if (!p) {
                if (d->n_plugins >= MAX_PLUGINS) {
                        log_error("more than %d plugin sockets in %s: %s ignored", MAX_PLUGINS, d->registry_dir, name);
                        return;
                }
                plugin_ent *v = realloc(d->plugins, (d->n_plugins + 1) * sizeof *v);
                if (!v) return;
                d->plugins = v;
                p = &d->plugins[d->n_plugins++];
                *p = (plugin_ent){.sock = TAKE_PTR(path)};
        }
        p->ok = false;
        p->retries = 0;
        dra_plugin_attempt(d, p);
}

static void socket_removed(dp_node_dra *d, const char *name) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", d->registry_dir, name);
        plugin_ent *p = path ? plugin_find_sock(d, path) : NULL;
        if (!p) return;
        if (p->ok) log_info("DRA driver %s deregistered (%s removed)", p->driver, path);
        dra_plugin_clear(p);
        *p = d->plugins[--d->n_plugins];
}

/* Reconcile the plugin list with the directory (after events deferred
 * during a call): gone sockets deregister, unknown ones are dialled. */
void dra_registry_rewalk(dp_node_dra *d) {
        while (d->rewalk && !d->in_call) {
                d->rewalk = false;
                for (size_t i = 0; i < d->n_plugins;) {
                        struct stat st;
                        if (stat(d->plugins[i].sock, &st) == 0 && S_ISSOCK(st.st_mode)) {
                                i++;
                                continue;
                        }
                        if (d->plugins[i].ok)
                                log_info("DRA driver %s deregistered (%s removed)", d->plugins[i].driver,
                                         d->plugins[i].sock);
                        dra_plugin_clear(&d->plugins[i]);
                        d->plugins[i] = d->plugins[--d->n_plugins];
                }
                _cleanup_(closedir_safep) DIR *dir = opendir(d->registry_dir);
                struct dirent *de;
                while (dir && (de = readdir(dir))) {
                        if (de->d_name[0] == '.') continue;
                        _cleanup_free_ char *path = dp_asprintf("%s/%s", d->registry_dir, de->d_name);
                        if (path && !plugin_find_sock(d, path)) dra_socket_added(d, de->d_name);
                }
        }
}

int dra_on_registry_event(dp_loop_source *s, const struct inotify_event *ev, void *ud) {
        dp_node_dra *d = ud;
        if (!ev->len) return 0;
        if (d->in_call) {
                d->rewalk = true;
                return 0;
        }
        if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
                socket_removed(d, ev->name);
        else
                dra_socket_added(d, ev->name);
        dra_registry_rewalk(d);
        dp_node_dra_rescan(d);
        return 0;
}

/* ---- what a driver holds (devplane's PreparedClaims List) ------------------------------- */

/* The List answer into the state: claims the driver holds that the state
 * does not know are added (with no pods: unprepared once no pod needs them);
 * claims the state has as prepared that the driver no longer holds are
 * prepared again for their pods. 0 or -ENOMEM / -E2BIG. */
static int state_merge_list(dp_node_dra *d, const char *driver, const Devplane__Dra__V1__ListResponse *resp) {
        bool changed = dp_node_dra_state_clear_unknown(d->st, driver);
        size_t added = 0;
        for (size_t i = 0; i < resp->n_claims; i++) {
                const Devplane__Dra__V1__PreparedClaim *x = resp->claims[i];
                if (!x->uid || !*x->uid) continue;
                size_t nd = DP_MIN(x->n_devices, (size_t)DP_NODE_DRA_STATE_MAX_DEVICES);
                prep_dev devs[DP_NODE_DRA_STATE_MAX_DEVICES + 1];
                for (size_t k = 0; k < nd; k++) {
                        const Devplane__Dra__V1__PreparedDevice *y = x->devices[k];
                        devs[k] = (prep_dev){
                                y->pool_name,      y->device_name,
                                y->request_names,  DP_MIN(y->n_request_names, (size_t)DP_NODE_DRA_STATE_MAX_STRINGS),
                                y->cdi_device_ids, DP_MIN(y->n_cdi_device_ids, (size_t)DP_NODE_DRA_STATE_MAX_STRINGS)};
                }
                claim_ent *c = dra_claim_find(d, x->uid, driver);
                if (c && c->phase == DP_NODE_DRA_PREPARED) continue;
                int r = 0;
                if (!c) {
                        r = dp_node_dra_state_add(d->st, x->uid, x->namespace_ ? x->namespace_ : "",
                                                  x->name ? x->name : "", driver, &c);
                        if (r == -EINVAL) {
                                log_error("DRA driver %s holds a claim whose uid, namespace or name the node's DRA "
                                          "state cannot hold (not UTF-8, or a control character): not recorded",
                                          driver);
                                continue;
                        }
                        if (r < 0) return r;
                        added++;
                        log_warning("DRA driver %s holds ResourceClaim %s/%s (%s), which the node's DRA state did not "
                                    "know: kept until no pod needs it",
                                    driver, c->ns, c->name, c->uid);
                }
                r = dp_node_dra_claim_set_devices(c, devs, nd);
                if (r == -ENOMEM) return r;
                if (r < 0) /* what matters to unprepare is the claim; its devices are shown only */
                        log_warning("DRA driver %s: the devices of ResourceClaim %s/%s (%s) cannot be recorded", driver,
                                    c->ns, c->name, c->uid);
                c->phase = DP_NODE_DRA_PREPARED;
                changed = true;
        }
        for (size_t i = 0; i < d->st->n_claims; i++) {
                claim_ent *c = &d->st->claims[i];
                if (!streq(c->driver, driver) || c->phase != DP_NODE_DRA_PREPARED || c->skipped) continue;
                bool held = false;
                for (size_t k = 0; k < resp->n_claims && !held; k++)
                        held = resp->claims[k]->uid && streq(resp->claims[k]->uid, c->uid);
                if (held) continue;
                /* The driver lost it (its own state was lost): a pod that
                 * needs it gets it prepared again, as on first start. */
                log_warning("DRA driver %s does not hold ResourceClaim %s/%s (%s) any more; preparing it again for "
                            "its pods",
                            driver, c->ns, c->name, c->uid);
                c->phase = DP_NODE_DRA_PREPARING;
                changed = true;
                pod_ent *p;
                for (size_t k = 0; (p = dra_pods_using(d, c, &k)); k++) {
                        p->prepared = false;
                        p->next_try = 0;
                }
        }
        /* The table is whole again once every registered driver answered. */
        bool all = d->st->rebuild && !d->st->n_unknown;
        for (size_t i = 0; all && i < d->n_plugins; i++)
                all = !d->plugins[i].ok || !d->plugins[i].list_pending || streq(d->plugins[i].driver, driver);
        if (all && d->st->rebuild) {
                log_info("node's DRA state rebuilt from the drivers' PreparedClaims List");
                d->st->rebuild = false;
                changed = true;
        }
        log_info("DRA driver %s holds %zu prepared claim(s); %zu were not in the node's DRA state", driver,
                 resp->n_claims, added);
        if (changed) (void)dra_state_save(d);
        return 0;
}

/* Ask a registered driver what it holds. UNIMPLEMENTED (a driver that is not
 * devplane's) is final: while the state is being rebuilt, the driver is
 * marked unknown (claims it held before the state was lost cannot be
 * known, so the node cannot unprepare them). Other failures are retried
 * with backoff, the driver marked unknown meanwhile when rebuilding. */
void dra_plugin_list(dp_node_dra *d, plugin_ent *p) {
        p->list_next_try = 0;
        if (!p->ok || !p->list_pending) return;
        _cleanup_free_ char *driver = strdup(p->driver), *endpoint = strdup(p->endpoint);
        _cleanup_(dp_grpc_channel_freep) dp_grpc_channel *ch = NULL;
        _cleanup_grpc_reply_ dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
        dp_error e = DP_ERROR_INIT;
        int r = driver && endpoint ? 0 : dp_error_set(&e, -ENOMEM, "out of memory");
        /* Registry events wait while the call runs the loop (in_call), so p
         * stays where it is. */
        d->in_call++;
        if (r >= 0 && (r = dp_grpc_channel_connect_unix(d->loop, endpoint, &ch)) < 0)
                dp_error_errno(&e, r, "connect to %s", endpoint);
        if (r >= 0) {
                Devplane__Dra__V1__ListRequest req = DEVPLANE__DRA__V1__LIST_REQUEST__INIT;
                r = dp_grpc_channel_call_sync_msg(ch, LIST_PATH, &req.base,
                                                  &devplane__dra__v1__list_response__descriptor, LIST_TIMEOUT_USEC,
                                                  &rep, &e);
        }
        d->in_call--;
        if (r >= 0 && (r = state_merge_list(d, driver, (const Devplane__Dra__V1__ListResponse *)rep.msg)) >= 0) {
                p->list_pending = false;
                return;
        }
        if (r >= 0 || rep.status != 12 /* UNIMPLEMENTED */) {
                const char *why = r == -ENOMEM ? "out of memory" : r == -E2BIG ? "too many claims" : dp_error_msg(&e);
                log_warning("PreparedClaims List of DRA driver %s: %s; retrying", driver, why);
                _cleanup_free_ char *reason = dp_asprintf("PreparedClaims List failed: %s; retrying", why);
                if (d->st->rebuild && reason && dp_node_dra_state_set_unknown(d->st, driver, reason) > 0)
                        (void)dra_state_save(d);
                p->list_attempts++;
                p->list_next_try = dp_loop_now() + dra_backoff_usec(d, p->list_attempts);
                return;
        }
        p->list_pending = false;
        if (!d->st->rebuild && !dp_node_dra_state_unknown_reason(d->st, driver)) {
                log_info("DRA driver %s does not serve devplane's PreparedClaims List: the node's DRA state is not "
                         "cross-checked with it",
                         driver);
                return;
        }
        log_error("DRA driver %s does not serve devplane's PreparedClaims List (UNIMPLEMENTED) and the node's DRA "
                  "state was lost: claims it held before cannot be known and stay prepared until unprepared by hand",
                  driver);
        if (dp_node_dra_state_set_unknown(d->st, driver,
                                          "the node's DRA state was lost and the driver does not serve devplane's "
                                          "PreparedClaims List (UNIMPLEMENTED)") > 0)
                (void)dra_state_save(d);
}
