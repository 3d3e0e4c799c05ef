/* SPDX-License-Identifier: Apache-2.0
 * kube/exec-cred.c and the exec part of kube/kubeconfig.c: users[].user.exec
 * read as kubectl reads it, the ExecCredential a plugin prints, RFC 3339
 * times, and the plugin run (a shell script: environment, caching, errors). */
#include <stdio.h>
#include <sys/stat.h>

#include "harness.h"
#include "kube/kube.h"

static const char KC[] = "apiVersion: v1\nkind: Config\ncurrent-context: eks\n"
                         "clusters: [{name: c, cluster: {server: 'https://x:443'}}]\n"
                         "contexts: [{name: eks, context: {cluster: c, user: u, namespace: team-a}}]\n"
                         "users:\n- name: u\n  user:\n    exec:\n"
                         "      apiVersion: client.authentication.k8s.io/v1\n"
                         "      command: %s\n"
                         "      args: [--region, eu-west-1]\n"
                         "      env: [{name: AWS_PROFILE, value: prod}, {name: EMPTY, value: ''}]\n"
                         "      interactiveMode: %s\n"
                         "      installHint: get it\n";

static int parse_kc(const char *dir, const char *cmd, const char *mode, unsigned flags, dp_kube_config **ret,
                    dp_error *e) {
        char buf[2048], name[512];
        snprintf(buf, sizeof buf, KC, cmd, mode);
        snprintf(name, sizeof name, "%s/kc.yaml", dir);
        return dp_kube_config_parse_flags(buf, strlen(buf), name, NULL, flags, ret, e);
}

TEST(exec_parsed_only_when_asked) {
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(parse_kc("/k", "aws", "Never", 0, &c, &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "users[name=u].user.exec: not supported by the agent");
        ASSERT_OK(parse_kc("/k", "./bin/aws", "Never", DP_KUBE_CONFIG_EXEC, &c, &e));
        ASSERT_STREQ(c->namespace, "team-a");
        ASSERT_STREQ(c->exec->command, "/k/./bin/aws"); /* relative to the kubeconfig */
        ASSERT_STREQ(c->exec->args[0], "/k/./bin/aws");
        ASSERT_STREQ(c->exec->args[2], "eu-west-1");
        ASSERT_TRUE(c->exec->args[3] == NULL);
        ASSERT_STREQ(c->exec->env[0], "AWS_PROFILE=prod");
        ASSERT_STREQ(c->exec->env[1], "EMPTY=");
        ASSERT_EQ(c->exec->interactive, DP_KUBE_EXEC_NEVER);
        ASSERT_STREQ(c->exec->install_hint, "get it");
        c = dp_kube_config_free(c);
        ASSERT_OK(parse_kc("/k", "aws", "Always", DP_KUBE_CONFIG_EXEC, &c, &e));
        ASSERT_STREQ(c->exec->command, "aws"); /* looked up in PATH */
        c = dp_kube_config_free(c);
        ASSERT_EQ(parse_kc("/k", "aws", "Sometimes", DP_KUBE_CONFIG_EXEC, &c, &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "interactiveMode: \"Sometimes\": must be Never, IfAvailable or Always");
}

TEST(exec_config_errors) {
        static const struct {
                const char *exec, *want;
        } cases[] = {
                {"{command: aws}", "exec.apiVersion: \"\": must be client.authentication.k8s.io/v1 or"},
                {"{apiVersion: client.authentication.k8s.io/v1alpha1, command: aws}", "must be client"},
                {"{apiVersion: client.authentication.k8s.io/v1, command: aws}", "interactiveMode: required with"},
                {"{apiVersion: client.authentication.k8s.io/v1beta1}", "exec.command: required"},
                {"{apiVersion: client.authentication.k8s.io/v1beta1, command: a, args: x}", "exec.args: expected a list"},
                {"{apiVersion: client.authentication.k8s.io/v1beta1, command: a, args: [{}]}", "exec.args[0]: expected"},
                {"{apiVersion: client.authentication.k8s.io/v1beta1, command: a, env: [{value: x}]}",
                 "exec.env[0].name: required"},
                {"{apiVersion: client.authentication.k8s.io/v1beta1, command: a, env: [{name: X}]}",
                 "exec.env[0].value: required"},
                {"{apiVersion: client.authentication.k8s.io/v1beta1, command: a, provideClusterInfo: 3}",
                 "provideClusterInfo: expected true or false"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[1024];
                snprintf(buf, sizeof buf,
                         "kind: Config\ncurrent-context: x\nclusters: [{name: c, cluster: {server: 'https://x'}}]\n"
                         "contexts: [{name: x, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {exec: %s}}]\n",
                         cases[i].exec);
                dp_kube_config *c = NULL;
                dp_error e = DP_ERROR_INIT;
                ASSERT_EQ(dp_kube_config_parse_flags(buf, strlen(buf), "kc", NULL, DP_KUBE_CONFIG_EXEC, &c, &e), -EINVAL);
                ASSERT_CONTAINS(e.msg, cases[i].want);
        }
}

TEST(rfc3339) {
        int64_t t = 0;
        ASSERT_OK(dp_kube_parse_time("1970-01-01T00:00:00Z", &t));
        ASSERT_EQ(t, 0);
        ASSERT_OK(dp_kube_parse_time("2026-12-06T05:00:00Z", &t));
        ASSERT_EQ(t, 1796533200);
        ASSERT_OK(dp_kube_parse_time("2026-12-06T07:00:00.123456+02:00", &t));
        ASSERT_EQ(t, 1796533200);
        ASSERT_OK(dp_kube_parse_time("2024-02-29t00:00:00-01:30", &t));
        ASSERT_EQ(t, 1709170200);
        static const char *const bad[] = {"", "2026-12-06", "2026-12-06T05:00:00", "2026-13-01T00:00:00Z",
                                          "2026-12-06T05:00:00.Z", "2026-12-06T05:00:00+0200", "2026-12-06T25:00:00Z",
                                          "2026-12-06T05:00:00Zx", "２026-12-06T05:00:00Z"};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_EQ(dp_kube_parse_time(bad[i], &t), -EINVAL);
}

static const char V1[] = "client.authentication.k8s.io/v1";

TEST(decode_exec_credential) {
        dp_kube_credential c;
        dp_error e = DP_ERROR_INIT;
        const char *ok = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":"
                         "{\"token\":\"k8s-aws-v1.abc\",\"expirationTimestamp\":\"2026-12-06T05:00:00Z\"}}";
        ASSERT_OK(dp_kube_exec_decode(ok, strlen(ok), V1, "p", &c, &e));
        ASSERT_STREQ(c.token, "k8s-aws-v1.abc");
        ASSERT_EQ(c.expires, 1796533200);
        dp_kube_credential_done(&c);
        const char *cert = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":"
                           "{\"clientCertificateData\":\"-----BEGIN\",\"clientKeyData\":\"-----KEY\"}}";
        ASSERT_OK(dp_kube_exec_decode(cert, strlen(cert), V1, "p", &c, &e));
        ASSERT_TRUE(!c.token && c.cert_len == 10 && c.key_len == 8 && c.expires == 0);
        dp_kube_credential_done(&c);
        static const struct {
                const char *out, *want;
        } bad[] = {
                {"not json: [", "p: its output is not an ExecCredential"},
                {"{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{}}",
                 "the kubeconfig asks for client.authentication.k8s.io/v1, the plugin answered "
                 "client.authentication.k8s.io/v1beta1"},
                {"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"Secret\"}", "(kind: another)"},
                {"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}", "has no status"},
                {"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":"
                 "{\"clientKeyData\":\"k\"}}",
                 "neither status.token nor"},
                {"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":"
                 "{\"token\":1}}",
                 "status.token: expected a string"},
                {"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":"
                 "{\"token\":\"t\",\"expirationTimestamp\":\"tomorrow\"}}",
                 "expirationTimestamp: not an RFC 3339 time"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ASSERT_EQ(dp_kube_exec_decode(bad[i].out, strlen(bad[i].out), V1, "p", &c, &e), -EINVAL);
                ASSERT_CONTAINS(e.msg, bad[i].want);
        }
}

/* A plugin as a shell script in a fresh directory; its runs counted. */
static char *plugin(const char *body) {
        char tmpl[] = "/tmp/dp-exec.XXXXXX";
        char *dir = mkdtemp(tmpl);
        if (!dir) return NULL;
        char path[300];
        snprintf(path, sizeof path, "%s/plugin", dir);
        FILE *f = fopen(path, "w");
        if (!f) return NULL;
        fprintf(f, "#!/bin/sh\necho x >> \"$(dirname \"$0\")/runs\"\n%s\n", body);
        fclose(f);
        chmod(path, 0755);
        return strdup(dir);
}

static int count_runs(const char *dir) {
        char path[300], buf[256];
        snprintf(path, sizeof path, "%s/runs", dir);
        FILE *f = fopen(path, "r");
        int n = 0;
        while (f && fgets(buf, sizeof buf, f))
                n++;
        if (f) fclose(f);
        return n;
}

TEST(run_caches_until_expiry) {
        char *dir = plugin("test \"$AWS_PROFILE\" = prod || exit 7\n"
                           "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 8;; esac\n"
                           "test \"$1\" = --region || exit 9\n"
                           "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                           "\"status\":{\"token\":\"tok\",\"expirationTimestamp\":\"2030-01-01T00:00:00Z\"}}'");
        ASSERT_TRUE(dir);
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(parse_kc(dir, "./plugin", "IfAvailable", DP_KUBE_CONFIG_EXEC, &c, &e));
        const dp_kube_credential *cred = NULL;
        int64_t y2029 = 1861920000, y2031 = 1924992000;
        for (int i = 0; i < 3; i++) {
                if (dp_kube_config_credential(c, false, y2029, 10000, &cred, &e) < 0) DP_FAIL("%s", e.msg);
                ASSERT_STREQ(cred->token, "tok");
        }
        ASSERT_EQ(count_runs(dir), 1);
        ASSERT_OK(dp_kube_config_credential(c, false, y2031, 10000, &cred, &e)); /* expired */
        ASSERT_EQ(count_runs(dir), 2);
        ASSERT_OK(dp_kube_config_credential(c, true, y2029, 10000, &cred, &e)); /* after a 401 */
        ASSERT_EQ(count_runs(dir), 3);
        ASSERT_EQ(c->exec->runs, 3);
        dp_kube_config_free(c);
        free(dir);
}

TEST(run_errors) {
        char *dir = plugin("printf 'login needed\\033[2J\\r\\n' >&2\nexit 3");
        ASSERT_TRUE(dir);
        dp_kube_config *c = NULL;
        dp_error e = DP_ERROR_INIT;
        const dp_kube_credential *cred = NULL;
        ASSERT_OK(parse_kc(dir, "./plugin", "Never", DP_KUBE_CONFIG_EXEC, &c, &e));
        ASSERT_EQ(dp_kube_config_credential(c, false, 0, 10000, &cred, &e), -EIO);
        ASSERT_CONTAINS(e.msg, "users[name=u].user.exec (exec plugin ");
        ASSERT_CONTAINS(e.msg, "/plugin): exited with status 3: login needed\\e[2J\\r\\n");
        c = dp_kube_config_free(c);
        ASSERT_OK(parse_kc(dir, "./plugin", "Always", DP_KUBE_CONFIG_EXEC, &c, &e));
        ASSERT_EQ(dp_kube_config_credential(c, false, 0, 10000, &cred, &e), -EPERM);
        c = dp_kube_config_free(c);
        ASSERT_OK(parse_kc(dir, "./nothing-here", "Never", DP_KUBE_CONFIG_EXEC, &c, &e));
        ASSERT_EQ(dp_kube_config_credential(c, false, 0, 10000, &cred, &e), -ENOENT);
        ASSERT_CONTAINS(e.msg, "nothing-here: command not found: get it");
        c = dp_kube_config_free(c);
        free(dir);
        /* never answers: killed at the timeout */
        dir = plugin("exec sleep 30");
        ASSERT_OK(parse_kc(dir, "./plugin", "Never", DP_KUBE_CONFIG_EXEC, &c, &e));
        ASSERT_EQ(dp_kube_config_credential(c, false, 0, 200, &cred, &e), -ETIMEDOUT);
        ASSERT_CONTAINS(e.msg, "did not answer within 0.2 s (killed)");
        c = dp_kube_config_free(c);
        free(dir);
        /* too much output, read no further than the cap */
        dir = plugin("exec cat /dev/zero"); /* never ends: killed once past the cap */
        ASSERT_OK(parse_kc(dir, "./plugin", "Never", DP_KUBE_CONFIG_EXEC, &c, &e));
        ASSERT_EQ(dp_kube_config_credential(c, false, 0, 10000, &cred, &e), -E2BIG);
        ASSERT_CONTAINS(e.msg, "printed more than 1048576 bytes");
        dp_kube_config_free(c);
        free(dir);
}
