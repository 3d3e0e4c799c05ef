/* SPDX-License-Identifier: Apache-2.0
 * kube/kubeconfig.c: the kubeconfig subset, its errors, in-cluster
 * credentials and base64. */
#include <stdio.h>
#include <sys/stat.h>

#include "harness.h"
#include "kube/kube.h"

/* "Y2E=" is "ca", "Y2VydA==" "cert", "a2V5" "key". */
static const char KC[] = "apiVersion: v1\n"
                         "kind: Config\n"
                         "current-context: node\n"
                         "clusters:\n"
                         "- name: other\n"
                         "  cluster: {server: 'https://elsewhere:1'}\n"
                         "- name: c1\n"
                         "  cluster:\n"
                         "    server: https://10.0.0.1:6443/\n"
                         "    certificate-authority-data: Y2E=\n"
                         "users:\n"
                         "- name: u1\n"
                         "  user:\n"
                         "    client-certificate-data: Y2VydA==\n"
                         "    client-key-data: a2V5\n"
                         "- name: u2\n"
                         "  user: {token: abc, }\n"
                         "contexts:\n"
                         "- name: node\n"
                         "  context: {cluster: c1, user: u1}\n"
                         "- name: tok\n"
                         "  context: {cluster: other, user: u2}\n";

static int parse(const char *text, const char *ctx, dp_kube_config **ret, dp_error *e) {
        return dp_kube_config_parse(text, strlen(text), "dir/kc.yaml", ctx, ret, e);
}

TEST(current_context_client_certificate) {
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(parse(KC, NULL, &c, &e));
        ASSERT_STREQ(c->server, "https://10.0.0.1:6443");
        ASSERT_EQ(c->ca_len, 2);
        ASSERT_STREQ(c->ca_data, "ca");
        ASSERT_STREQ(c->cert_data, "cert");
        ASSERT_STREQ(c->key_data, "key");
        ASSERT_TRUE(!c->token && !c->ca_file);
        dp_kube_config_free(c);
}

TEST(explicit_context_token) {
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(parse(KC, "tok", &c, &e));
        ASSERT_STREQ(c->server, "https://elsewhere:1");
        ASSERT_STREQ(c->token, "abc");
        ASSERT_TRUE(!c->cert_data && !c->ca_data);
        dp_kube_config_free(c);
}

TEST(relative_paths_resolve_against_the_file) {
        const char *t = "current-context: x\n"
                        "clusters: [{name: c, cluster: {server: 'https://h:1', certificate-authority: ca.crt}}]\n"
                        "users: [{name: u, user: {client-certificate: /abs/c.pem, client-key: k.pem}}]\n"
                        "contexts: [{name: x, context: {cluster: c, user: u}}]\n";
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(parse(t, NULL, &c, &e));
        ASSERT_STREQ(c->ca_file, "dir/ca.crt");
        ASSERT_STREQ(c->cert_file, "/abs/c.pem");
        ASSERT_STREQ(c->key_file, "dir/k.pem");
        dp_kube_config_free(c);
}

static void expect_error(const char *text, const char *ctx, const char *needle) {
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        int r = parse(text, ctx, &c, &e);
        if (r != -EINVAL) DP_FAIL("expected -EINVAL for \"%s\", got %d (%s)", needle, r, dp_error_msg(&e));
        ASSERT_TRUE(c == NULL);
        ASSERT_CONTAINS(e.msg, "dir/kc.yaml");
        ASSERT_CONTAINS(e.msg, needle);
}

TEST(errors_name_file_and_field) {
        expect_error(KC, "nope", "contexts: no entry named \"nope\"");
        expect_error("kind: Config\n", NULL, "current-context: required");
        expect_error("kind: Pod\n", NULL, "kind: \"Pod\": must be Config");
        expect_error("- a\n", NULL, "expected a map");
        const char *base = "current-context: x\n"
                           "contexts: [{name: x, context: {cluster: c, user: u}}]\n";
        char buf[1024];
        snprintf(buf, sizeof buf, "%sclusters: [{name: c, cluster: {}}]\nusers: [{name: u, user: {token: t}}]\n", base);
        expect_error(buf, NULL, "clusters[name=c].cluster.server: required");
        snprintf(buf, sizeof buf,
                 "%sclusters: [{name: c, cluster: {server: 'ftp://x'}}]\nusers: [{name: u, user: {token: t}}]\n", base);
        expect_error(buf, NULL, "clusters[name=c].cluster.server: \"ftp://x\": must be an https://");
        snprintf(buf, sizeof buf,
                 "%sclusters: [{name: c, cluster: {server: 'https://x', certificate-authority-data: '!!'}}]\n"
                 "users: [{name: u, user: {token: t}}]\n",
                 base);
        expect_error(buf, NULL, "certificate-authority-data: not valid base64");
        snprintf(buf, sizeof buf,
                 "%sclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {exec: {command: "
                 "aws}}}]\n",
                 base);
        expect_error(buf, NULL, "users[name=u].user.exec: not supported by the agent");
        snprintf(buf, sizeof buf,
                 "%sclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {client-key: k}}]\n",
                 base);
        expect_error(buf, NULL, "users[name=u].user.client-certificate: required with client-key");
        snprintf(buf, sizeof buf,
                 "%sclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {}}]\n", base);
        expect_error(buf, NULL, "users[name=u].user: no credentials");
        snprintf(buf, sizeof buf,
                 "%sclusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {token: [1]}}]\n",
                 base);
        expect_error(buf, NULL, "users[name=u].user.token: expected string");
        snprintf(buf, sizeof buf, "%sclusters: {}\nusers: []\n", base);
        expect_error(buf, NULL, "clusters: expected a list");
}

TEST(load_missing_file) {
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_kube_config_load("/nonexistent/kc", NULL, &c, &e), -ENOENT);
        ASSERT_CONTAINS(e.msg, "/nonexistent/kc");
}

TEST(in_cluster) {
        char dir[] = "/tmp/dp-kube-sa.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        unsetenv("KUBERNETES_SERVICE_HOST");
        ASSERT_EQ(dp_kube_config_in_cluster(dir, &c, &e), -ENOENT);
        ASSERT_CONTAINS(e.msg, "KUBERNETES_SERVICE_HOST");
        setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
        setenv("KUBERNETES_SERVICE_PORT", "443", 1);
        ASSERT_EQ(dp_kube_config_in_cluster(dir, &c, &e), -ENOENT);
        ASSERT_CONTAINS(e.msg, "token");
        char p[256];
        snprintf(p, sizeof p, "%s/token", dir);
        FILE *f = fopen(p, "w");
        fputs("tok\n", f);
        fclose(f);
        snprintf(p, sizeof p, "%s/ca.crt", dir);
        f = fopen(p, "w");
        fclose(f);
        ASSERT_OK(dp_kube_config_in_cluster(dir, &c, &e));
        ASSERT_STREQ(c->server, "https://[fd00::1]:443");
        ASSERT_CONTAINS(c->token_file, "/token");
        ASSERT_CONTAINS(c->ca_file, "/ca.crt");
        dp_kube_config_free(c);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
}

TEST(base64) {
        char *out = NULL;
        size_t n = 0;
        ASSERT_OK(dp_kube_base64_decode("aGVsbG8=", 8, &out, &n));
        ASSERT_EQ(n, 5);
        ASSERT_STREQ(out, "hello");
        free(out);
        ASSERT_OK(dp_kube_base64_decode("aGVs\nbG8", 8, &out, &n));
        ASSERT_STREQ(out, "hello");
        free(out);
        ASSERT_EQ(dp_kube_base64_decode("a", 1, &out, &n), -EINVAL);
        ASSERT_EQ(dp_kube_base64_decode("aG=V", 4, &out, &n), -EINVAL);
        ASSERT_EQ(dp_kube_base64_decode("a b", 3, &out, &n), -EINVAL);
}

TEST(backoff_doubles_to_the_cap) {
        dp_kube_backoff b = {100, 350, 0};
        ASSERT_EQ(dp_kube_backoff_next(&b), 100);
        ASSERT_EQ(dp_kube_backoff_next(&b), 200);
        ASSERT_EQ(dp_kube_backoff_next(&b), 350);
        ASSERT_EQ(dp_kube_backoff_next(&b), 350);
        dp_kube_backoff_reset(&b);
        ASSERT_EQ(dp_kube_backoff_next(&b), 100);
}

TEST(query_escape) {
        char *s = dp_kube_query_escape("spec.nodeName=a b,x/y");
        ASSERT_STREQ(s, "spec.nodeName%3Da%20b%2Cx%2Fy");
        free(s);
}
