/* SPDX-License-Identifier: Apache-2.0
 * Server and channel over a real unix socket on one dp_loop: synchronous
 * calls, a stream pushed from a timer, reconnect after shutdown, and the
 * loop's timers, signals and inotify watches. */
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "grpc/grpc.h"
#include "harness.h"
#include "proto/proto.h"

static char dir[256];
static char sock[300];

static void setup(void) {
        snprintf(dir, sizeof dir, "/tmp/dp-grpc-test-XXXXXX");
        ASSERT_TRUE(mkdtemp(dir));
        snprintf(sock, sizeof sock, "%s/plugin.sock", dir);
}

static void cleanup(void) {
        unlink(sock);
        rmdir(dir);
}

static void h_options(dp_grpc_call *call, void *ud) {
        (void)ud;
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.get_preferred_allocation_available = true;
        ASSERT_OK(dp_grpc_call_reply_msg(call, &o.base));
}

static void h_fail(dp_grpc_call *call, void *ud) {
        (void)ud;
        dp_grpc_call_finishf(call, DP_GRPC_UNKNOWN, "resource %s is not known", "x/y");
}

/* ListAndWatch: the call is kept and pushed from a timer. */
typedef struct watch {
        dp_grpc_call *call;
        int sent;
        dp_loop_source *timer;
} watch;

static void h_watch(dp_grpc_call *call, void *ud) {
        watch *w = ud;
        w->call = call;
}

static int watch_timer(dp_loop_source *s, uint64_t now, void *ud) {
        watch *w = ud;
        if (!w->call) {
                dp_loop_source_set_time(s, now + 1000);
                return 0;
        }
        V1beta1__Device d = V1BETA1__DEVICE__INIT;
        char id[16];
        snprintf(id, sizeof id, "gpu-%d", w->sent);
        d.id = id;
        d.health = "Healthy";
        V1beta1__Device *ds[] = {&d};
        V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
        r.n_devices = 1;
        r.devices = ds;
        ASSERT_OK(dp_grpc_call_send_msg(w->call, &r.base));
        if (++w->sent == 3) {
                ASSERT_OK(dp_grpc_call_finish(w->call, DP_GRPC_OK, NULL));
                w->call = NULL;
                return 0;
        }
        dp_loop_source_set_time(s, now + 1000);
        return 0;
}

typedef struct stream_result {
        int msgs, done, status;
        char last[32];
        dp_loop *loop;
} stream_result;

static void sr_msg(dp_grpc_client_call *cc, const uint8_t *m, size_t len, void *ud) {
        (void)cc;
        stream_result *r = ud;
        ProtobufCMessage *pm;
        ASSERT_OK(dp_proto_unpack(&v1beta1__list_and_watch_response__descriptor, m, len, &pm));
        V1beta1__ListAndWatchResponse *lw = (V1beta1__ListAndWatchResponse *)pm;
        ASSERT_EQ(lw->n_devices, 1);
        snprintf(r->last, sizeof r->last, "%s", lw->devices[0]->id);
        protobuf_c_message_free_unpacked(pm, NULL);
        r->msgs++;
}

static void sr_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        (void)cc;
        (void)message;
        stream_result *r = ud;
        r->done++;
        r->status = status;
        dp_loop_exit(r->loop, 0);
}

static dp_grpc_server *make_server(watch *w) {
        dp_grpc_server *srv;
        ASSERT_OK(dp_grpc_server_new(&srv));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/v1beta1.DevicePlugin/GetDevicePluginOptions", DP_GRPC_UNARY,
                                            &v1beta1__empty__descriptor, h_options, NULL));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/v1beta1.Registration/Register", DP_GRPC_UNARY,
                                            &v1beta1__register_request__descriptor, h_fail, NULL));
        ASSERT_OK(dp_grpc_server_add_method(srv, "/v1beta1.DevicePlugin/ListAndWatch", DP_GRPC_SERVER_STREAMING,
                                            &v1beta1__empty__descriptor, h_watch, w));
        return srv;
}

TEST(sync_unary_and_errors) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        watch w = {0};
        dp_grpc_server *srv = make_server(&w);
        ASSERT_OK(dp_grpc_server_listen_unix(srv, l, sock, 0600));
        struct stat st;
        ASSERT_OK(stat(sock, &st));
        ASSERT_EQ(st.st_mode & 0777, 0600);

        dp_grpc_channel *ch;
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
        V1beta1__Empty e = V1BETA1__EMPTY__INIT;
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_grpc_channel_call_sync_msg(ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", &e.base,
                                                &v1beta1__device_plugin_options__descriptor, 2000000, &r, &err));
        ASSERT_EQ(r.status, DP_GRPC_OK);
        V1beta1__DevicePluginOptions *o = (V1beta1__DevicePluginOptions *)r.msg;
        ASSERT_TRUE(o->get_preferred_allocation_available);
        ASSERT_FALSE(o->pre_start_required);

        V1beta1__RegisterRequest rr = V1BETA1__REGISTER_REQUEST__INIT;
        rr.version = "v1beta1";
        ASSERT_EQ(dp_grpc_channel_call_sync_msg(ch, "/v1beta1.Registration/Register", &rr.base, NULL, 0, &r, &err),
                  -EREMOTEIO);
        ASSERT_EQ(r.status, DP_GRPC_UNKNOWN);
        ASSERT_STREQ(r.message, "resource x/y is not known");
        ASSERT_CONTAINS(err.msg, "UNKNOWN: resource x/y");

        ASSERT_EQ(dp_grpc_channel_call_sync(ch, "/v1beta1.DevicePlugin/Missing", NULL, 0, 0, &r, &err), -EREMOTEIO);
        ASSERT_EQ(r.status, DP_GRPC_UNIMPLEMENTED);
        ASSERT_EQ(dp_grpc_server_connection_count(srv), 1);

        dp_grpc_reply_done(&r);
        dp_grpc_channel_free(ch);
        dp_grpc_server_free(srv);
        ASSERT_TRUE(stat(sock, &st) < 0); /* the listener removed its socket */
        dp_loop_free(l);
        cleanup();
}

TEST(stream_pushed_from_timer) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        watch w = {0};
        dp_grpc_server *srv = make_server(&w);
        ASSERT_OK(dp_grpc_server_listen_unix(srv, l, sock, 0));
        ASSERT_OK(dp_loop_add_timer(l, dp_loop_now() + 1000, watch_timer, &w, &w.timer));
        dp_grpc_channel *ch;
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
        stream_result sr = {.loop = l};
        ASSERT_OK(dp_grpc_channel_start_call(ch, "/v1beta1.DevicePlugin/ListAndWatch", NULL, 0, 0, sr_msg, sr_done, &sr,
                                             NULL));
        ASSERT_OK(dp_loop_run(l));
        ASSERT_EQ(sr.msgs, 3);
        ASSERT_STREQ(sr.last, "gpu-2");
        ASSERT_EQ(sr.status, DP_GRPC_OK);
        dp_loop_source_free(w.timer);
        dp_grpc_channel_free(ch);
        dp_grpc_server_free(srv);
        dp_loop_free(l);
        cleanup();
}

static void closed_cb(dp_grpc_channel *ch, void *ud) {
        (void)ch;
        *(int *)ud += 1;
}

TEST(shutdown_and_stale_socket) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        watch w = {0};
        dp_grpc_server *srv = make_server(&w);
        ASSERT_OK(dp_grpc_server_listen_unix(srv, l, sock, 0));
        dp_grpc_channel *ch;
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
        int closed = 0;
        dp_grpc_channel_set_closed_handler(ch, closed_cb, &closed);
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        ASSERT_OK(dp_grpc_channel_call_sync(ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0, 0, &r, NULL));
        dp_grpc_server_shutdown(srv);
        while (!closed)
                ASSERT_OK(dp_loop_run_once(l, 5000));
        ASSERT_FALSE(dp_grpc_channel_is_connected(ch));
        ASSERT_EQ(dp_grpc_channel_call_sync(ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0, 0, &r, NULL),
                  -ENOTCONN);
        ASSERT_EQ(r.status, DP_GRPC_UNAVAILABLE);
        dp_grpc_channel_free(ch);
        while (dp_grpc_server_connection_count(srv) > 0)
                ASSERT_OK(dp_loop_run_once(l, 5000));
        dp_grpc_server_free(srv);

        /* a socket file left behind by a dead process is replaced */
        dp_grpc_server *s2 = make_server(&w);
        ASSERT_OK(dp_grpc_server_listen_unix(s2, l, sock, 0));
        dp_grpc_server *s3 = make_server(&w);
        ASSERT_OK(dp_grpc_server_listen_unix(s3, l, sock, 0));
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
        ASSERT_OK(dp_grpc_channel_call_sync(ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", NULL, 0, 0, &r, NULL));
        ASSERT_EQ(dp_grpc_server_connection_count(s3), 1);
        dp_grpc_channel_free(ch);
        dp_grpc_server_free(s2); /* not its socket any more: must not unlink s3's */
        struct stat st;
        ASSERT_OK(stat(sock, &st));
        dp_grpc_server_free(s3);
        dp_grpc_reply_done(&r);
        dp_loop_free(l);
        cleanup();
}

TEST(connect_missing_socket) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        dp_grpc_channel *ch;
        ASSERT_EQ(dp_grpc_channel_connect_unix(l, sock, &ch), -ENOENT);
        /* a socket file left by a dead server: nobody listening */
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        ASSERT_TRUE(strlen(sock) < sizeof sa.sun_path);
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        ASSERT_OK(bind(fd, (struct sockaddr *)&sa, sizeof sa));
        close(fd);
        ASSERT_EQ(dp_grpc_channel_connect_unix(l, sock, &ch), -ECONNREFUSED);
        char longpath[200];
        memset(longpath, 'x', sizeof longpath - 1);
        longpath[sizeof longpath - 1] = 0;
        ASSERT_EQ(dp_grpc_channel_connect_unix(l, longpath, &ch), -ENAMETOOLONG);
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        ASSERT_EQ(dp_grpc_channel_call_sync(NULL, "/a/b", NULL, 0, 0, &r, NULL), -ENOTCONN);
        ASSERT_EQ(r.status, DP_GRPC_UNAVAILABLE);
        dp_grpc_reply_done(&r);
        dp_loop_free(l);
        cleanup();
}

static int on_sig(dp_loop_source *s, const struct signalfd_siginfo *si, void *ud) {
        (void)s;
        *(int *)ud = (int)si->ssi_signo;
        return 0;
}

static int on_ino(dp_loop_source *s, const struct inotify_event *ev, void *ud) {
        (void)s;
        if (ev->len && streq(ev->name, "plugin.sock")) *(int *)ud += 1;
        return 0;
}

static int on_fail(dp_loop_source *s, uint64_t now, void *ud) {
        (void)s;
        (void)now;
        (void)ud;
        return -EIO;
}

TEST(loop_sources) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        int sig = 0, created = 0;
        dp_loop_source *ss, *is, *ts;
        ASSERT_OK(dp_loop_add_signal(l, SIGUSR1, on_sig, &sig, &ss));
        ASSERT_OK(dp_loop_add_inotify(l, dir, IN_CREATE, on_ino, &created, &is));
        ASSERT_EQ(dp_loop_add_inotify(l, "/nonexistent-dp-dir", IN_CREATE, on_ino, &created, &ts), -ENOENT);
        raise(SIGUSR1);
        while (!sig)
                ASSERT_OK(dp_loop_run_once(l, 5000));
        ASSERT_EQ(sig, SIGUSR1);
        dp_grpc_server *srv;
        ASSERT_OK(dp_grpc_server_new(&srv));
        ASSERT_OK(dp_grpc_server_listen_unix(srv, l, sock, 0));
        while (!created)
                ASSERT_OK(dp_loop_run_once(l, 5000));
        ASSERT_OK(dp_loop_add_timer(l, 1, on_fail, NULL, &ts));
        ASSERT_EQ(dp_loop_run(l), -EIO);
        dp_loop_source_free(ts);
        dp_loop_source_free(ss);
        dp_loop_source_free(is);
        dp_grpc_server_free(srv);
        dp_loop_free(l);
        cleanup();
}

/* A handler that frees its own server (e.g. an agent restarting a plugin
 * when asked over gRPC) and one that shuts it down. */
static dp_grpc_server *self_srv;
static void h_free_self(dp_grpc_call *call, void *ud) {
        (void)ud;
        dp_grpc_call_finish(call, DP_GRPC_ABORTED, "going away");
        self_srv = dp_grpc_server_free(self_srv);
}
static void h_shutdown_self(dp_grpc_call *call, void *ud) {
        (void)ud;
        dp_grpc_server_shutdown(self_srv);
        dp_grpc_call_send(call, (const uint8_t *)"bye", 3);
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

TEST(server_freed_or_shut_down_from_its_handler) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        for (int round = 0; round < 2; round++) {
                ASSERT_OK(dp_grpc_server_new(&self_srv));
                ASSERT_OK(dp_grpc_server_add_method(self_srv, "/t.T/X", DP_GRPC_UNARY, NULL,
                                                    round == 0 ? h_free_self : h_shutdown_self, NULL));
                ASSERT_OK(dp_grpc_server_listen_unix(self_srv, l, sock, 0));
                dp_grpc_channel *ch;
                ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
                int closed = 0;
                dp_grpc_channel_set_closed_handler(ch, closed_cb, &closed);
                dp_grpc_reply r = DP_GRPC_REPLY_INIT;
                int q = dp_grpc_channel_call_sync(ch, "/t.T/X", NULL, 0, 2000000, &r, NULL);
                if (round == 0) {
                        /* the reply may or may not have left before the socket closed */
                        ASSERT_TRUE(r.status == DP_GRPC_ABORTED || r.status == DP_GRPC_UNAVAILABLE);
                        ASSERT_TRUE(self_srv == NULL);
                } else {
                        ASSERT_OK(q);
                        ASSERT_EQ(r.len, 3);
                }
                struct stat st;
                ASSERT_TRUE(stat(sock, &st) < 0); /* listener gone at once */
                while (!closed)
                        ASSERT_OK(dp_loop_run_once(l, 5000));
                dp_grpc_reply_done(&r);
                dp_grpc_channel_free(ch);
                if (round == 1) {
                        while (dp_grpc_server_connection_count(self_srv) > 0)
                                ASSERT_OK(dp_loop_run_once(l, 5000));
                        self_srv = dp_grpc_server_free(self_srv);
                }
        }
        dp_loop_free(l);
        cleanup();
}

/* The kubelet pattern: inside its Register handler it calls the plugin
 * (GetDevicePluginOptions) before replying. Here synchronously, through a
 * nested loop run from the handler; and a sync call from inside a callback
 * of its own channel is refused rather than hanging. */
static dp_grpc_channel *inner_ch;
static void h_inner(dp_grpc_call *call, void *ud) {
        (void)ud;
        dp_grpc_call_send(call, (const uint8_t *)"inner", 5);
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}
static void h_outer(dp_grpc_call *call, void *ud) {
        (void)ud;
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        int q = dp_grpc_channel_call_sync(inner_ch, "/b.B/Inner", NULL, 0, 2000000, &r, NULL);
        if (q < 0)
                dp_grpc_call_finish(call, DP_GRPC_INTERNAL, r.message);
        else {
                dp_grpc_call_send(call, r.data, r.len);
                dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
        }
        dp_grpc_reply_done(&r);
}
static int deadlock_rc;
static void done_then_sync(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        (void)cc;
        (void)status;
        (void)message;
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        deadlock_rc = dp_grpc_channel_call_sync(inner_ch, "/b.B/Inner", NULL, 0, 0, &r, NULL);
        dp_grpc_reply_done(&r);
        dp_loop_exit(ud, 0);
}

TEST(sync_call_inside_handler) {
        setup();
        char sock_b[320];
        snprintf(sock_b, sizeof sock_b, "%s/b.sock", dir);
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        dp_grpc_server *a, *b;
        ASSERT_OK(dp_grpc_server_new(&a));
        ASSERT_OK(dp_grpc_server_new(&b));
        ASSERT_OK(dp_grpc_server_add_method(a, "/a.A/Outer", DP_GRPC_UNARY, NULL, h_outer, NULL));
        ASSERT_OK(dp_grpc_server_add_method(b, "/b.B/Inner", DP_GRPC_UNARY, NULL, h_inner, NULL));
        ASSERT_OK(dp_grpc_server_listen_unix(a, l, sock, 0));
        ASSERT_OK(dp_grpc_server_listen_unix(b, l, sock_b, 0));
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock_b, &inner_ch));
        dp_grpc_channel *ch;
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        for (int i = 0; i < 3; i++) {
                ASSERT_OK(dp_grpc_channel_call_sync(ch, "/a.A/Outer", NULL, 0, 5000000, &r, NULL));
                ASSERT_EQ(r.len, 5);
                ASSERT_TRUE(memcmp(r.data, "inner", 5) == 0);
        }
        ASSERT_OK(dp_grpc_channel_start_call(inner_ch, "/b.B/Inner", NULL, 0, 0, NULL, done_then_sync, l, NULL));
        ASSERT_OK(dp_loop_run(l));
        ASSERT_EQ(deadlock_rc, -EDEADLK);
        dp_grpc_reply_done(&r);
        dp_grpc_channel_free(ch);
        inner_ch = dp_grpc_channel_free(inner_ch);
        dp_grpc_server_free(a);
        dp_grpc_server_free(b);
        dp_loop_free(l);
        cleanup();
}

/* From inside a stream's message callback, a synchronous call on another
 * channel: the first channel is muted during the nested loop and catches
 * up afterwards. */
static int nested_ok;
static void msg_then_sync(dp_grpc_client_call *cc, const uint8_t *m, size_t len, void *ud) {
        sr_msg(cc, m, len, ud);
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        if (dp_grpc_channel_call_sync(inner_ch, "/b.B/Inner", NULL, 0, 2000000, &r, NULL) == 0) nested_ok++;
        dp_grpc_reply_done(&r);
}

TEST(sync_call_inside_stream_callback) {
        setup();
        char sock_b[320];
        snprintf(sock_b, sizeof sock_b, "%s/b.sock", dir);
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        watch w = {0};
        dp_grpc_server *a = make_server(&w), *b;
        ASSERT_OK(dp_grpc_server_new(&b));
        ASSERT_OK(dp_grpc_server_add_method(b, "/b.B/Inner", DP_GRPC_UNARY, NULL, h_inner, NULL));
        ASSERT_OK(dp_grpc_server_listen_unix(a, l, sock, 0));
        ASSERT_OK(dp_grpc_server_listen_unix(b, l, sock_b, 0));
        ASSERT_OK(dp_loop_add_timer(l, dp_loop_now() + 1000, watch_timer, &w, &w.timer));
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock_b, &inner_ch));
        dp_grpc_channel *ch;
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
        stream_result sr = {.loop = l};
        ASSERT_OK(dp_grpc_channel_start_call(ch, "/v1beta1.DevicePlugin/ListAndWatch", NULL, 0, 0, msg_then_sync,
                                             sr_done, &sr, NULL));
        ASSERT_OK(dp_loop_run(l));
        ASSERT_EQ(sr.msgs, 3);
        ASSERT_EQ(nested_ok, 3);
        ASSERT_EQ(sr.status, DP_GRPC_OK);
        dp_loop_source_free(w.timer);
        dp_grpc_channel_free(ch);
        inner_ch = dp_grpc_channel_free(inner_ch);
        dp_grpc_server_free(a);
        dp_grpc_server_free(b);
        dp_loop_free(l);
        cleanup();
}

/* ---- limits: connection cap, idle timeout, accept pause on EMFILE ---- */

static int raw_connect(void) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(fd >= 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        ASSERT_TRUE(strlen(sock) < sizeof sa.sun_path);
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        ASSERT_OK(connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ? -errno : 0);
        return fd;
}

/* Run the loop until cond holds (20 s at most: then the test fails). */
#define RUN_UNTIL(l, cond)                                                                              \
        do {                                                                                            \
                uint64_t _end = dp_loop_now() + 20ull * 1000 * 1000;                                    \
                while (!(cond) && dp_loop_now() < _end) dp_loop_run_once(l, 10);                        \
                ASSERT_TRUE(cond);                                                                      \
        } while (0)

/* Reads what the server sent until EOF: true on EOF (the server closed). */
static bool reads_eof(int fd) {
        char b[4096];
        for (;;) {
                ssize_t n = recv(fd, b, sizeof b, 0);
                if (n == 0) return true;
                if (n < 0) return errno == ECONNRESET;
        }
}

/* One GetDevicePluginOptions on a new channel, which stays open. */
static dp_grpc_channel *call_options(dp_loop *l) {
        dp_grpc_channel *ch;
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, &ch));
        dp_grpc_reply r = DP_GRPC_REPLY_INIT;
        dp_error err = DP_ERROR_INIT;
        V1beta1__Empty e = V1BETA1__EMPTY__INIT;
        ASSERT_OK(dp_grpc_channel_call_sync_msg(ch, "/v1beta1.DevicePlugin/GetDevicePluginOptions", &e.base,
                                                &v1beta1__device_plugin_options__descriptor, 5 * 1000000, &r, &err));
        dp_grpc_reply_done(&r);
        return ch;
}

/* Limits and a ListAndWatch kept open on its own channel. */
static dp_grpc_server *capped_server(dp_loop *l, watch *w, size_t max_conns, uint64_t idle_usec,
                                     dp_grpc_channel **ret_ch, stream_result *sr) {
        dp_grpc_server *srv = make_server(w);
        dp_grpc_server_limits lim;
        dp_grpc_server_get_limits(srv, &lim);
        lim.max_connections = max_conns;
        lim.idle_timeout_usec = idle_usec;
        ASSERT_OK(dp_grpc_server_set_limits(srv, &lim));
        ASSERT_OK(dp_grpc_server_listen_unix(srv, l, sock, 0600));
        ASSERT_OK(dp_grpc_channel_connect_unix(l, sock, ret_ch));
        ASSERT_OK(dp_grpc_channel_start_call(*ret_ch, "/v1beta1.DevicePlugin/ListAndWatch", NULL, 0, 0, sr_msg, sr_done,
                                             sr, NULL));
        RUN_UNTIL(l, w->call != NULL);
        return srv;
}

TEST(connection_cap_evicts_the_connection_idle_longest) {
        /* issue 21, F11: held idle connections must not lock the kubelet out */
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        dp_grpc_server *srv = make_server(&(watch){0});
        dp_grpc_server_limits lim;
        dp_grpc_server_get_limits(srv, &lim);
        ASSERT_EQ(lim.max_connections, DP_GRPC_MAX_SERVER_CONNECTIONS);
        ASSERT_EQ(lim.idle_timeout_usec, DP_GRPC_IDLE_TIMEOUT_USEC);
        dp_grpc_server_free(srv);

        watch w = {0};
        stream_result sr = {.loop = l};
        dp_grpc_channel *ch;
        srv = capped_server(l, &w, 4, DP_GRPC_IDLE_TIMEOUT_USEC, &ch, &sr);
        /* 3 idle connections fill the cap (one half-sent: idle too) */
        int fds[4];
        for (int i = 0; i < 3; i++) {
                fds[i] = raw_connect();
                RUN_UNTIL(l, dp_grpc_server_connection_count(srv) == (size_t)i + 2);
        }
        ASSERT_EQ(send(fds[1], "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24, MSG_NOSIGNAL), 24);

        /* a new client gets in: the oldest idle connection makes room, the
         * stream stays */
        dp_grpc_channel *ch2 = call_options(l);
        ASSERT_TRUE(reads_eof(fds[0]));
        ASSERT_EQ(dp_grpc_server_evicted_count(srv), 1);
        ASSERT_EQ(dp_grpc_server_refused_count(srv), 0);
        fds[3] = raw_connect();
        RUN_UNTIL(l, dp_grpc_server_evicted_count(srv) == 2);
        ASSERT_TRUE(reads_eof(fds[1]));
        ASSERT_EQ(dp_grpc_server_connection_count(srv), 4);
        ASSERT_EQ(sr.done, 0);
        for (int i = 0; i < 4; i++)
                close(fds[i]);
        ASSERT_OK(dp_grpc_call_finish(w.call, DP_GRPC_OK, NULL));
        RUN_UNTIL(l, sr.done == 1);
        dp_grpc_channel_free(ch2);
        dp_grpc_channel_free(ch);
        dp_grpc_server_free(srv);
        dp_loop_free(l);
        cleanup();
}

TEST(connection_cap_refuses_when_every_connection_is_busy) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        watch w = {0};
        stream_result sr = {.loop = l};
        dp_grpc_channel *ch;
        dp_grpc_server *srv = capped_server(l, &w, 1, DP_GRPC_IDLE_TIMEOUT_USEC, &ch, &sr);
        /* the only connection has a call in progress: accepted and closed */
        int fd = raw_connect();
        RUN_UNTIL(l, dp_grpc_server_refused_count(srv) == 1);
        ASSERT_TRUE(reads_eof(fd));
        close(fd);
        ASSERT_EQ(dp_grpc_server_evicted_count(srv), 0);
        ASSERT_EQ(sr.done, 0);
        ASSERT_OK(dp_grpc_call_finish(w.call, DP_GRPC_OK, NULL));
        RUN_UNTIL(l, sr.done == 1);
        ASSERT_EQ(sr.status, DP_GRPC_OK);
        dp_grpc_channel_free(ch);
        dp_grpc_server_free(srv);
        dp_loop_free(l);
        cleanup();
}

TEST(idle_timeout) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        watch w = {0};
        stream_result sr = {.loop = l};
        dp_grpc_channel *ch;
        /* a ListAndWatch in progress keeps its connection past the idle time */
        dp_grpc_server *srv = capped_server(l, &w, DP_GRPC_MAX_SERVER_CONNECTIONS, 300 * 1000, &ch, &sr);
        int fds[3];
        for (int i = 0; i < 3; i++)
                fds[i] = raw_connect();
        ASSERT_EQ(send(fds[0], "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24, MSG_NOSIGNAL), 24); /* never a request */
        RUN_UNTIL(l, dp_grpc_server_connection_count(srv) == 4);

        /* the three that never sent a whole request are closed after 300 ms;
         * the stream stays */
        RUN_UNTIL(l, dp_grpc_server_connection_count(srv) == 1);
        for (int i = 0; i < 3; i++) {
                ASSERT_TRUE(reads_eof(fds[i]));
                close(fds[i]);
        }
        ASSERT_EQ(sr.done, 0);
        ASSERT_OK(dp_grpc_call_finish(w.call, DP_GRPC_OK, NULL));
        w.call = NULL;
        RUN_UNTIL(l, sr.done == 1);
        ASSERT_EQ(sr.status, DP_GRPC_OK);

        /* after its last call, the channel's connection is idle too */
        RUN_UNTIL(l, dp_grpc_server_connection_count(srv) == 0);
        dp_grpc_channel_free(ch);
        dp_grpc_server_free(srv);
        dp_loop_free(l);
        cleanup();
}

TEST(accept_pauses_when_descriptors_run_out) {
        setup();
        dp_loop *l;
        ASSERT_OK(dp_loop_new(&l));
        watch w = {0};
        dp_grpc_server *srv = make_server(&w);
        dp_grpc_server_limits lim;
        dp_grpc_server_get_limits(srv, &lim);
        lim.accept_pause_usec = 50 * 1000;
        ASSERT_OK(dp_grpc_server_set_limits(srv, &lim));
        ASSERT_OK(dp_grpc_server_listen_unix(srv, l, sock, 0600));
        int client = raw_connect();
        /* use up every descriptor under a low limit */
        struct rlimit rl;
        ASSERT_OK(getrlimit(RLIMIT_NOFILE, &rl));
        int top = dup(0);
        ASSERT_TRUE(top >= 0);
        close(top);
        rl.rlim_cur = (rlim_t)top + 16;
        ASSERT_OK(setrlimit(RLIMIT_NOFILE, &rl));
        int held[64], n = 0;
        for (int fd; n < 64 && (fd = dup(0)) >= 0;) held[n++] = fd;
        ASSERT_EQ(errno, EMFILE);
        /* one second of EMFILE: about 1 s / 50 ms pauses, not a spin */
        uint64_t end = dp_loop_now() + 1000 * 1000;
        while (dp_loop_now() < end) dp_loop_run_once(l, 10);
        size_t pauses = dp_grpc_server_refused_count(srv);
        ASSERT_TRUE(pauses >= 1);
        ASSERT_TRUE(pauses <= 100);
        ASSERT_EQ(dp_grpc_server_connection_count(srv), 0);
        /* descriptors back: the waiting connection is accepted */
        for (int i = 0; i < n; i++) close(held[i]);
        RUN_UNTIL(l, dp_grpc_server_connection_count(srv) == 1);
        close(client);
        dp_grpc_server_free(srv);
        dp_loop_free(l);
        cleanup();
}
