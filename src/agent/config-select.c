/* SPDX-License-Identifier: Apache-2.0
 * config-select.c — per-node config selection, as NVIDIA's config manager
 * does it: a directory of named configs (a mounted ConfigMap), the node's
 * label nvidia.com/device-plugin.config naming one, a default otherwise. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "doc/doc.h"
#include "kube/kube.h"

static bool config_name_ok(const char *s) {
        /* A ConfigMap key: [-._a-zA-Z0-9]+, and never a path. */
        if (!*s || strlen(s) > 253 || streq(s, ".") || streq(s, "..")) return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                      *s == '_' || *s == '.'))
                        return false;
        return true;
}

static bool is_file(const char *dir, const char *name) {
        _cleanup_free_ char *p = dp_asprintf("%s/%s", dir, name);
        struct stat st;
        return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int dp_agent_config_pick(const char *dir, const char *value, const char *def, char **ret, dp_error *err) {
        assert_return(dir && ret, -EINVAL);
        const char *name = NULL;
        if (value && *value) {
                if (!config_name_ok(value) || !is_file(dir, value))
                        return dp_error_set(err, -ENOENT, "node label names config \"%.253s\", which %s has not", value,
                                            dir);
                name = value;
        } else if (def && *def && is_file(dir, def)) {
                name = def;
        } else {
                /* NVIDIA's "single" fallback: the only config there is. */
                DIR *d = opendir(dir);
                if (!d) return dp_error_errno(err, -errno, "config directory %s", dir);
                struct dirent *e;
                size_t n = 0;
                char only[256] = "";
                while ((e = readdir(d)))
                        if (e->d_name[0] != '.' && is_file(dir, e->d_name) && n++ == 0)
                                snprintf(only, sizeof only, "%s", e->d_name);
                closedir(d);
                if (n != 1)
                        return dp_error_set(err, -ENOENT,
                                            "no config selected: the node has no label naming one, %s has no \"%s\" "
                                            "and holds %zu configs",
                                            dir, def ? def : "default", n);
                return (*ret = dp_asprintf("%s/%s", dir, only)) ? 0 : -ENOMEM;
        }
        return (*ret = dp_asprintf("%s/%s", dir, name)) ? 0 : -ENOMEM;
}

typedef struct label_read {
        const char *label;
        bool done;
        int r;
        char *value;
        char why[256];
} label_read;

static void on_node(long status, const char *body, size_t len, const char *errmsg, void *ud) {
        label_read *lr = ud;
        lr->done = true;
        if (status != 200) {
                lr->r = status == 404 ? -ENOENT : -EIO;
                snprintf(lr->why, sizeof lr->why, "status %ld%s%s", status, errmsg ? ": " : "", errmsg ? errmsg : "");
                return;
        }
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set || dp_doc_parse(set, body, len, "node", NULL) < 0 || dp_doc_count(set) != 1) {
                lr->r = -EBADMSG;
                snprintf(lr->why, sizeof lr->why, "the answer is not a Node");
                return;
        }
        const dp_doc_node *v = dp_doc_get(dp_doc_get(dp_doc_get(dp_doc_root(set, 0), "metadata"), "labels"), lr->label);
        const char *s;
        if (v && dp_doc_get_str(v, true, &s, NULL) >= 0 && !(lr->value = strdup(s))) lr->r = -ENOMEM;
}

int dp_agent_node_label(dp_loop *l, const dp_kube_config *kc, const char *node, const char *label, char **ret,
                        dp_error *err) {
        assert_return(l && kc && node && label && ret, -EINVAL);
        _cleanup_(dp_kube_client_freep) dp_kube_client *c = NULL;
        int r = dp_kube_client_new(l, kc, &c);
        if (r < 0) return dp_error_errno(err, r, "API client");
        _cleanup_free_ char *en = dp_kube_query_escape(node);
        _cleanup_free_ char *path = en ? dp_asprintf("/api/v1/nodes/%s", en) : NULL;
        if (!path) return -ENOMEM;
        label_read lr = {.label = label};
        dp_kube_request *req = NULL;
        if ((r = dp_kube_request_start(c, "GET", path, NULL, 0, 30000, on_node, &lr, &req)) < 0)
                return dp_error_errno(err, r, "GET node %s", node);
        while (!lr.done && r >= 0)
                r = dp_loop_run_once(l, -1);
        if (r < 0) return dp_error_errno(err, r, "event loop");
        if (lr.r < 0) return dp_error_set(err, lr.r, "GET node %s (for its label %s): %s", node, label, lr.why);
        *ret = lr.value;
        return 0;
}
