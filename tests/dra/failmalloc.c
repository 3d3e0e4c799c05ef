/* SPDX-License-Identifier: Apache-2.0
 * dra-failmalloc — run the driver core through a scenario (inventory,
 * slices through the publisher, YAML, prepare with metadata files, CDI JSON,
 * checkpoint encode/decode, ledger) once per allocation, failing exactly that
 * allocation; with the argument "recover", the recovery path instead (a
 * claim back from its CDI spec, the start-up walk that rebuilds a
 * checkpoint, unknown-state marks). Every run must end in success or -ENOMEM, never a crash or
 * another error, and LeakSanitizer checks at exit that every failure path
 * freed what it had. Allocations are intercepted with the linker's --wrap;
 * the profile and the claim are read before failures start. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dra/driver.h"
#include "dra/inventory.h"
#include "dra/ledger.h"
#include "dra/prepare.h"
#include "dra/recover.h"
#include "dra/slices.h"

#include "failmalloc.h"

static const char claim_yaml[] =
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaim\n"
        "metadata: {name: c, namespace: ns, uid: u-1, annotations: {resource.kubernetes.io/pod-claim-name: gpu}}\n"
        "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
        "status:\n"
        "  allocation:\n"
        "    devices:\n"
        "      results:\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-0-partition-1,\n"
        "         shareID: 7c1f0e36-aaaa-bbbb-cccc-000000000001, consumedCapacity: {memory: 8Gi}}\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-1-full}\n"
        "      config:\n"
        "      - source: FromClaim\n"
        "        requests: [gpu]\n"
        "        opaque:\n"
        "          driver: gpu.example.com\n"
        "          parameters: {apiVersion: gpu.resource.example.com/v1alpha1, kind: GpuConfig,\n"
        "                       sharing: {strategy: SpacePartitioning, spacePartitioningConfig: {partitionCount: "
        "2}}}\n";

static struct dp_device_set *set;
static dp_object_list *claims;
static char root[64] = "/tmp/dp-dra-failmalloc-XXXXXX";
static char cdi_dir[128], md_dir[128], state_dir[128];

static bool must(int r, const char *what);

/* Entries in a directory, "." and ".." aside. */
static int entries(const char *dir) {
        DIR *d = opendir(dir);
        if (!d) return -1;
        int n = 0;
        for (struct dirent *e; (e = readdir(d));)
                if (!streq(e->d_name, ".") && !streq(e->d_name, "..")) n++;
        closedir(d);
        return n;
}

/* The daemon's path: prepare and unprepare on disk with the ledger. A
 * failed unprepare is retried without injected failures, as the kubelet
 * retries; afterwards nothing of the claim may be left on disk. */
static bool node_round(dp_dra_inventory *inv, dp_resource_slice *const *v, size_t n) {
        dp_error err = DP_ERROR_INIT;
        dp_dra_checkpoint *c = dp_dra_checkpoint_new("gpu.example.com", "node-a");
        dp_ledger *l = c ? dp_ledger_new(set, inv) : NULL;
        bool ok = c && l;
        dp_dra_node_dirs dirs = {cdi_dir, md_dir, state_dir, NULL};
        dp_dra_prepare_input in = {inv, v, n, NULL, NULL};
        dp_dra_prepared_claim pc = {0};
        if (ok) ok = must(dp_dra_node_prepare(c, l, &in, claims->items[0].claim, &dirs, &pc, &err), "node prepare");
        dp_dra_prepared_claim_done(&pc);
        /* the pod goes whether or not prepare worked: unprepare */
        if (c && l && dp_dra_node_unprepare(c, l, "u-1", &dirs, &err) < 0) {
                unsigned long saved = fail_at;
                fail_at = 0;
                if (dp_dra_node_unprepare(c, l, "u-1", &dirs, &err) < 0) {
                        fprintf(stderr, "dra-failmalloc: unprepare retry: %s\n", err.msg);
                        abort();
                }
                fail_at = saved;
                ok = false;
        }
        dp_ledger_free(l);
        dp_dra_checkpoint_free(c);
        if (entries(cdi_dir) != 0 || entries(md_dir) != 0) {
                fprintf(stderr, "dra-failmalloc: files left behind at allocation %lu\n", fail_at);
                abort();
        }
        return ok;
}

static bool must(int r, const char *what) {
        if (r < 0 && r != -ENOMEM) {
                fprintf(stderr, "dra-failmalloc: %s failed with %d at allocation %lu\n", what, r, fail_at);
                abort();
        }
        return r >= 0;
}

static bool scenario(void) {
        bool ok = true;
        dp_error err = DP_ERROR_INIT;
        dp_dra_inventory *inv = NULL;
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = 2;
        if (!must(dp_dra_inventory_build(set, &o, &inv, &err), "inventory")) return false;
        dp_dra_publisher *pub = dp_dra_publisher_new(1);
        if (!pub) {
                dp_dra_inventory_free(inv);
                return false;
        }
        dp_dra_taint_rule rules[] = {{"xid-79", DP_DRA_TAINT_NO_EXECUTE}};
        dp_dra_slice_options so = DP_DRA_SLICE_OPTIONS_INIT;
        so.rules = rules;
        so.n_rules = 1;
        ok = must(dp_dra_publisher_update(pub, inv, &so, &err), "publish");
        size_t n = 0;
        dp_resource_slice *const *v = dp_dra_publisher_slices(pub, &n);
        dp_strbuf sb = DP_STRBUF_INIT;
        if (ok) ok = must(dp_dra_slices_emit(v, n, DP_DOC_YAML, &sb), "emit");
        dp_strbuf_done(&sb);

        dp_dra_prepare_output out = {0};
        bool prepared = false;
        if (ok) {
                dp_dra_prepare_input in = {inv, v, n, "/run/md", NULL};
                prepared = ok = must(dp_dra_prepare(&in, claims->items[0].claim, &out, &err), "prepare");
        }
        dp_dra_checkpoint *c = ok ? dp_dra_checkpoint_new("gpu.example.com", "node-a") : NULL;
        if (ok && !c) ok = false;
        if (ok) ok = must(dp_dra_checkpoint_put(c, &out.claim), "checkpoint put");
        if (ok) ok = must(dp_dra_checkpoint_encode(c, &sb), "checkpoint encode");
        if (ok) {
                dp_dra_checkpoint *d = NULL;
                ok = must(dp_dra_checkpoint_decode(sb.buf, sb.len, "ck", &d, &err), "checkpoint decode");
                dp_dra_prepared_claim *gone = NULL;
                if (ok) ok = must(dp_dra_checkpoint_remove(d, "u-1", &gone), "checkpoint remove");
                dp_dra_prepared_claim_free(gone);
                dp_dra_checkpoint_free(d);
        }
        dp_strbuf_done(&sb);
        dp_dra_checkpoint_free(c);

        if (ok) ok = node_round(inv, v, n);
        dp_ledger *l = ok ? dp_ledger_new(set, inv) : NULL;
        if (ok && !l) ok = false;
        if (ok) {
                const char *devs[] = {"gpu-0-partition-1", "gpu-1-full"};
                ok = must(dp_ledger_acquire(l, DP_LEDGER_V2, "claim ns/c (u-1)", devs, 2, DP_LEDGER_SHARED, &err),
                          "ledger");
                const char *v1[] = {"gpu-2::0"};
                if (ok) ok = must(dp_ledger_acquire(l, DP_LEDGER_V1, "pod p/c", v1, 1, 0, &err), "ledger v1");
                dp_ledger_release(l, "pod p/c");
        }
        dp_ledger_free(l);
        if (prepared) dp_dra_prepare_output_done(&out);
        dp_dra_publisher_free(pub);
        dp_dra_inventory_free(inv);
        return ok;
}

static bool write_spec(const dp_dra_file *f) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", cdi_dir, f->name);
        FILE *fp = fopen(p, "w");
        if (!fp) abort();
        fwrite(f->data, 1, f->len, fp);
        fclose(fp);
        return true;
}

/* Recovery: a claim from its spec, the walk of a directory holding that
 * spec and a temp file of ours, marks. The spec is written and removed
 * with no failure injected (it is the setting, not the code under test). */
static bool scenario_recover(void) {
        dp_error err = DP_ERROR_INIT;
        dp_dra_inventory *inv = NULL;
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = 2;
        if (!must(dp_dra_inventory_build(set, &o, &inv, &err), "inventory")) return false;
        dp_dra_publisher *pub = dp_dra_publisher_new(1);
        bool ok = pub && must(dp_dra_publisher_update(pub, inv, NULL, &err), "publish");
        size_t n = 0;
        dp_resource_slice *const *v = ok ? dp_dra_publisher_slices(pub, &n) : NULL;
        dp_dra_prepare_output out = {0};
        bool prepared = false;
        if (ok) {
                dp_dra_prepare_input in = {inv, v, n, NULL, NULL};
                prepared = ok = must(dp_dra_prepare(&in, claims->items[0].claim, &out, &err), "prepare");
        }
        if (ok) {
                dp_dra_prepared_claim c;
                ok = must(dp_dra_recover_claim(inv, out.cdi_spec.name, out.cdi_spec.data, out.cdi_spec.len, &c, NULL,
                                               &err),
                          "recover claim");
                if (ok) dp_dra_prepared_claim_done(&c);
        }
        dp_dra_checkpoint *ck = ok ? dp_dra_checkpoint_new("gpu.example.com", "node-a") : NULL;
        if (ok && !ck) ok = false;
        if (ok) {
                unsigned long saved = fail_at;
                fail_at = 0;
                write_spec(&out.cdi_spec);
                fail_at = saved;
                dp_dra_recovery rec;
                ok = must(dp_dra_recover_dirs(ck, inv, cdi_dir, state_dir, "checkpoint.json", true, &rec, &err),
                          "recover dirs");
                if (ok && rec.recovered != 1) ok = false; /* -ENOMEM made the claim unknown: fail closed */
                dp_dra_recovery_done(&rec);
                char p[300];
                snprintf(p, sizeof p, "%s/%s", cdi_dir, out.cdi_spec.name);
                unlink(p);
        }
        dp_dra_checkpoint_free(ck);
        dp_ledger *l = ok ? dp_ledger_new(set, inv) : NULL;
        if (ok && !l) ok = false;
        if (ok) ok = must(dp_ledger_mark_unknown(l, "k", DP_LEDGER_V2, "why"), "mark");
        if (ok) ok = must(dp_ledger_mark_unknown(l, "k", DP_LEDGER_V1 | DP_LEDGER_V2, "why again"), "mark again");
        dp_ledger_clear_unknown(l, "k");
        dp_ledger_free(l);
        if (prepared) dp_dra_prepare_output_done(&out);
        dp_dra_publisher_free(pub);
        dp_dra_inventory_free(inv);
        return ok;
}

static bool run(void *ctx) {
        bool (**fn)(void) = ctx;
        return (*fn)();
}

int main(int argc, char **argv) {
        bool (*scenario_fn)(void) = argc > 1 && streq(argv[1], "recover") ? scenario_recover : scenario;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_device_set_load("example-gpu", "node-a", &set, &err) < 0) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
        }
        claims = dp_object_list_new();
        if (dp_model_decode_buffer(claim_yaml, sizeof(claim_yaml) - 1, "claim", claims, &err) < 0) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
        }
        if (!mkdtemp(root)) return 1;
        snprintf(cdi_dir, sizeof(cdi_dir), "%s/cdi", root);
        snprintf(md_dir, sizeof(md_dir), "%s/md", root);
        snprintf(state_dir, sizeof(state_dir), "%s/state", root);
        if (mkdir(cdi_dir, 0755) < 0 || mkdir(md_dir, 0755) < 0 || mkdir(state_dir, 0755) < 0) return 1;
        dp_failmalloc fm = {.name = "dra-failmalloc", .run = run, .ctx = (void *)&scenario_fn, .min_points = 1};
        dp_failmalloc_result res;
        int rc = dp_failmalloc_each(&fm, &res);
        printf("dra-failmalloc: %lu allocations, each failed in turn (%lu absorbed)\n", res.points, res.absorbed);
        char ck[200];
        snprintf(ck, sizeof(ck), "%s/checkpoint.json", state_dir);
        unlink(ck);
        rmdir(cdi_dir);
        rmdir(md_dir);
        rmdir(state_dir);
        rmdir(root);
        dp_object_list_free(claims);
        dp_dra_device_set_free(set);
        return rc;
}
