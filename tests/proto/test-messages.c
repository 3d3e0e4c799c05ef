/* SPDX-License-Identifier: Apache-2.0
 * The generated messages: names and field numbers from the fact sheet,
 * known byte vectors, and a pack/unpack round trip of every message type
 * filled generically through its descriptor. */
#include <stdio.h>

#include "harness.h"
#include "proto/proto.h"

/* ---- a tiny arena for generically filled messages */
static void *arena[100000];
static size_t n_arena;
static void *alloc0(size_t n) {
        void *p = calloc(1, n ? n : 1);
        ASSERT_TRUE(p && n_arena < ELEMENTSOF(arena));
        arena[n_arena++] = p;
        return p;
}
static void arena_free(void) {
        while (n_arena)
                free(arena[--n_arena]);
}

static char *str(const char *fmt, int i) {
        char *s = alloc0(64);
        snprintf(s, 64, fmt, i);
        return s;
}

/* Set one scalar/string/message value of field f at p. */
static void fill_value(const ProtobufCFieldDescriptor *f, void *p, int seed, int depth);

static ProtobufCMessage *fill_message(const ProtobufCMessageDescriptor *d, int seed, int depth) {
        ProtobufCMessage *m = alloc0(d->sizeof_message);
        d->message_init(m);
        if (depth > 3) return m;
        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                char *base = (char *)m;
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        size_t elem;
                        switch (f->type) {
                        case PROTOBUF_C_TYPE_STRING:
                        case PROTOBUF_C_TYPE_MESSAGE: elem = sizeof(void *); break;
                        case PROTOBUF_C_TYPE_INT64: elem = sizeof(int64_t); break;
                        default: elem = sizeof(int32_t); break;
                        }
                        size_t n = 2;
                        void *arr = alloc0(elem * n);
                        for (size_t k = 0; k < n; k++)
                                fill_value(f, (char *)arr + k * elem, seed * 3 + (int)k, depth);
                        *(size_t *)(base + f->quantifier_offset) = n;
                        *(void **)(base + f->offset) = arr;
                } else {
                        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) *(uint32_t *)(base + f->quantifier_offset) = f->id;
                        fill_value(f, base + f->offset, seed + (int)i, depth);
                }
        }
        return m;
}

static void fill_value(const ProtobufCFieldDescriptor *f, void *p, int seed, int depth) {
        switch (f->type) {
        case PROTOBUF_C_TYPE_STRING: *(char **)p = str("v-%d-\xc3\xbc", seed); break;
        case PROTOBUF_C_TYPE_BOOL: *(protobuf_c_boolean *)p = 1; break;
        case PROTOBUF_C_TYPE_INT32: *(int32_t *)p = seed % 2 ? -seed - 1 : seed + 1; break;
        case PROTOBUF_C_TYPE_INT64:
                *(int64_t *)p = seed % 2 ? -(int64_t)seed - 1 : (int64_t)seed * 100000000001LL;
                break;
        case PROTOBUF_C_TYPE_ENUM: *(int *)p = 1 + seed % 2; break;
        case PROTOBUF_C_TYPE_MESSAGE: *(ProtobufCMessage **)p = fill_message(f->descriptor, seed + 1, depth + 1); break;
        default: DP_FAIL("field %s: type %d not expected in these APIs", f->name, f->type);
        }
}

TEST(round_trip_every_message) {
        size_t n;
        const ProtobufCMessageDescriptor *const *all = dp_proto_all_messages(&n);
        ASSERT_TRUE(n >= 48);
        for (size_t i = 0; i < n; i++) {
                ProtobufCMessage *m = fill_message(all[i], (int)i, 0);
                uint8_t *a, *b;
                size_t la, lb;
                ASSERT_OK(dp_proto_pack(m, &a, &la));
                ProtobufCMessage *u;
                ASSERT_OK(dp_proto_unpack(all[i], a, la, &u));
                ASSERT_OK(dp_proto_pack(u, &b, &lb));
                if (la != lb || memcmp(a, b, la) != 0) DP_FAIL("%s does not round-trip", all[i]->name);
                if (all[i]->n_fields > 0 && la == 0) DP_FAIL("%s packed to nothing", all[i]->name);
                protobuf_c_message_free_unpacked(u, NULL);
                free(a);
                free(b);
                /* the empty message round-trips too */
                ASSERT_OK(dp_proto_unpack(all[i], NULL, 0, &u));
                ASSERT_OK(dp_proto_pack(u, &b, &lb));
                ASSERT_EQ(lb, 0);
                free(b);
                protobuf_c_message_free_unpacked(u, NULL);
                ASSERT_TRUE(dp_proto_find_message(all[i]->name) == all[i]);
        }
        arena_free();
}

TEST(fully_qualified_names) {
        const char *names[] = {
                "v1beta1.DevicePluginOptions",
                "v1beta1.RegisterRequest",
                "v1beta1.Empty",
                "v1beta1.ListAndWatchResponse",
                "v1beta1.TopologyInfo",
                "v1beta1.NUMANode",
                "v1beta1.Device",
                "v1beta1.PreStartContainerRequest",
                "v1beta1.PreStartContainerResponse",
                "v1beta1.PreferredAllocationRequest",
                "v1beta1.ContainerPreferredAllocationRequest",
                "v1beta1.PreferredAllocationResponse",
                "v1beta1.ContainerPreferredAllocationResponse",
                "v1beta1.AllocateRequest",
                "v1beta1.ContainerAllocateRequest",
                "v1beta1.CDIDevice",
                "v1beta1.AllocateResponse",
                "v1beta1.ContainerAllocateResponse",
                "v1beta1.Mount",
                "v1beta1.DeviceSpec",
                "pluginregistration.PluginInfo",
                "pluginregistration.RegistrationStatus",
                "pluginregistration.RegistrationStatusResponse",
                "pluginregistration.InfoRequest",
                "k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesRequest",
                "k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesResponse",
                "k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourceResponse",
                "k8s.io.kubelet.pkg.apis.dra.v1.Device",
                "k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesRequest",
                "k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourcesResponse",
                "k8s.io.kubelet.pkg.apis.dra.v1.NodeUnprepareResourceResponse",
                "k8s.io.kubelet.pkg.apis.dra.v1.Claim",
                "k8s.io.kubelet.pkg.apis.dra.v1beta1.Claim",
                "k8s.io.kubelet.pkg.apis.dra.v1beta1.Device",
                "v1alpha1.NodeWatchResourcesRequest",
                "v1alpha1.NodeWatchResourcesResponse",
                "v1alpha1.DeviceHealth",
                "v1alpha1.DeviceIdentifier",
                "v1.NodeWatchResourcesResponse",
                "v1.DeviceHealth",
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (!dp_proto_find_message(names[i])) DP_FAIL("missing message %s", names[i]);
}

static void expect_field(const ProtobufCMessageDescriptor *d, const char *name, unsigned id, ProtobufCType type,
                         ProtobufCLabel label) {
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);
        if (!f) DP_FAIL("%s has no field %s", d->name, name);
        if (f->id != id || f->type != type || f->label != label)
                DP_FAIL("%s.%s: id %u type %d label %d", d->name, name, f->id, f->type, f->label);
}

#define R PROTOBUF_C_LABEL_REPEATED
#define N PROTOBUF_C_LABEL_NONE
TEST(field_numbers_from_the_sheet) {
        expect_field(&v1beta1__device_plugin_options__descriptor, "pre_start_required", 1, PROTOBUF_C_TYPE_BOOL, N);
        expect_field(&v1beta1__device_plugin_options__descriptor, "get_preferred_allocation_available", 2,
                     PROTOBUF_C_TYPE_BOOL, N);
        expect_field(&v1beta1__register_request__descriptor, "version", 1, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&v1beta1__register_request__descriptor, "endpoint", 2, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&v1beta1__register_request__descriptor, "resource_name", 3, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&v1beta1__register_request__descriptor, "options", 4, PROTOBUF_C_TYPE_MESSAGE, N);
        expect_field(&v1beta1__numanode__descriptor, "ID", 1, PROTOBUF_C_TYPE_INT64, N);
        expect_field(&v1beta1__device__descriptor, "ID", 1, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&v1beta1__device__descriptor, "health", 2, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&v1beta1__device__descriptor, "topology", 3, PROTOBUF_C_TYPE_MESSAGE, N);
        expect_field(&v1beta1__pre_start_container_request__descriptor, "devices_ids", 1, PROTOBUF_C_TYPE_STRING, R);
        expect_field(&v1beta1__container_preferred_allocation_request__descriptor, "available_deviceIDs", 1,
                     PROTOBUF_C_TYPE_STRING, R);
        expect_field(&v1beta1__container_preferred_allocation_request__descriptor, "must_include_deviceIDs", 2,
                     PROTOBUF_C_TYPE_STRING, R);
        expect_field(&v1beta1__container_preferred_allocation_request__descriptor, "allocation_size", 3,
                     PROTOBUF_C_TYPE_INT32, N);
        expect_field(&v1beta1__container_preferred_allocation_response__descriptor, "deviceIDs", 1,
                     PROTOBUF_C_TYPE_STRING, R);
        expect_field(&v1beta1__container_allocate_response__descriptor, "envs", 1, PROTOBUF_C_TYPE_MESSAGE, R);
        expect_field(&v1beta1__container_allocate_response__descriptor, "mounts", 2, PROTOBUF_C_TYPE_MESSAGE, R);
        expect_field(&v1beta1__container_allocate_response__descriptor, "devices", 3, PROTOBUF_C_TYPE_MESSAGE, R);
        expect_field(&v1beta1__container_allocate_response__descriptor, "annotations", 4, PROTOBUF_C_TYPE_MESSAGE, R);
        expect_field(&v1beta1__container_allocate_response__descriptor, "cdi_devices", 5, PROTOBUF_C_TYPE_MESSAGE, R);
        expect_field(&v1beta1__mount__descriptor, "read_only", 3, PROTOBUF_C_TYPE_BOOL, N);
        expect_field(&v1beta1__device_spec__descriptor, "permissions", 3, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&pluginregistration__plugin_info__descriptor, "supported_versions", 4, PROTOBUF_C_TYPE_STRING, R);
        expect_field(&pluginregistration__registration_status__descriptor, "plugin_registered", 1, PROTOBUF_C_TYPE_BOOL,
                     N);
        expect_field(&pluginregistration__registration_status__descriptor, "error", 2, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&k8s__io__kubelet__pkg__apis__dra__v1__device__descriptor, "cdi_device_ids", 4,
                     PROTOBUF_C_TYPE_STRING, R);
        expect_field(&k8s__io__kubelet__pkg__apis__dra__v1__device__descriptor, "share_id", 5, PROTOBUF_C_TYPE_STRING,
                     N);
        ASSERT_TRUE(protobuf_c_message_descriptor_get_field_by_name(
                            &k8s__io__kubelet__pkg__apis__dra__v1beta1__device__descriptor, "share_id") == NULL);
        expect_field(&k8s__io__kubelet__pkg__apis__dra__v1__claim__descriptor, "uid", 2, PROTOBUF_C_TYPE_STRING, N);
        expect_field(&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor, "claims", 1,
                     PROTOBUF_C_TYPE_MESSAGE, R);
        expect_field(&v1alpha1__device_health__descriptor, "health", 2, PROTOBUF_C_TYPE_ENUM, N);
        expect_field(&v1alpha1__device_health__descriptor, "last_updated_time", 3, PROTOBUF_C_TYPE_INT64, N);
        expect_field(&v1alpha1__device_health__descriptor, "health_check_timeout_seconds", 4, PROTOBUF_C_TYPE_INT64, N);
        expect_field(&v1alpha1__device_health__descriptor, "message", 5, PROTOBUF_C_TYPE_STRING, N);
        ASSERT_EQ(V1ALPHA1__HEALTH_STATUS__UNHEALTHY, 2);
}

/* wire-protocols.md 5.5 vector B: the checkpoint's AllocResp bytes. */
static const uint8_t alloc_resp[] = {10, 31, 10, 22, 78, 86, 73, 68, 73, 65, 95, 86,  73,  83,  73,  66, 76,
                                     69, 95, 68, 69, 86, 73, 67, 69, 83, 18, 5,  116, 101, 103, 114, 97};

TEST(checkpoint_alloc_resp_vector) {
        ProtobufCMessage *m;
        ASSERT_OK(
                dp_proto_unpack(&v1beta1__container_allocate_response__descriptor, alloc_resp, sizeof alloc_resp, &m));
        V1beta1__ContainerAllocateResponse *r = (V1beta1__ContainerAllocateResponse *)m;
        ASSERT_EQ(r->n_envs, 1);
        ASSERT_STREQ(r->envs[0]->key, "NVIDIA_VISIBLE_DEVICES");
        ASSERT_STREQ(r->envs[0]->value, "tegra");
        ASSERT_EQ(r->n_mounts + r->n_devices + r->n_annotations + r->n_cdi_devices, 0);
        uint8_t *b;
        size_t n;
        ASSERT_OK(dp_proto_pack(m, &b, &n));
        ASSERT_EQ(n, sizeof alloc_resp);
        ASSERT_TRUE(memcmp(b, alloc_resp, n) == 0);
        free(b);
        protobuf_c_message_free_unpacked(m, NULL);

        /* built from scratch, it encodes to the same bytes */
        V1beta1__ContainerAllocateResponse__EnvsEntry e = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ENVS_ENTRY__INIT;
        e.key = "NVIDIA_VISIBLE_DEVICES";
        e.value = "tegra";
        V1beta1__ContainerAllocateResponse__EnvsEntry *es[] = {&e};
        V1beta1__ContainerAllocateResponse c = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
        c.n_envs = 1;
        c.envs = es;
        ASSERT_OK(dp_proto_pack(&c.base, &b, &n));
        ASSERT_EQ(n, sizeof alloc_resp);
        ASSERT_TRUE(memcmp(b, alloc_resp, n) == 0);
        free(b);
}

static void expect_bytes(const ProtobufCMessage *m, const uint8_t *want, size_t n) {
        uint8_t *b;
        size_t len;
        ASSERT_OK(dp_proto_pack(m, &b, &len));
        if (len != n || (n && memcmp(b, want, n) != 0)) {
                fprintf(stderr, "got:");
                for (size_t i = 0; i < len; i++)
                        fprintf(stderr, " %02x", b[i]);
                fprintf(stderr, "\n");
                DP_FAIL("%s: encoding differs", m->descriptor->name);
        }
        free(b);
}

TEST(known_encodings) {
        /* proto3 defaults are left out: an empty Device is zero bytes */
        V1beta1__Device d = V1BETA1__DEVICE__INIT;
        expect_bytes(&d.base, NULL, 0);
        d.id = "a";
        d.health = "Healthy";
        const uint8_t dev[] = {0x0a, 0x01, 'a', 0x12, 0x07, 'H', 'e', 'a', 'l', 't', 'h', 'y'};
        expect_bytes(&d.base, dev, sizeof dev);

        /* a negative int64 takes 10 bytes */
        V1beta1__NUMANode nn = V1BETA1__NUMANODE__INIT;
        nn.id = -1;
        const uint8_t neg[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
        expect_bytes(&nn.base, neg, sizeof neg);

        /* RegisterRequest with options */
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.get_preferred_allocation_available = 1;
        V1beta1__RegisterRequest rr = V1BETA1__REGISTER_REQUEST__INIT;
        rr.version = "v1beta1";
        rr.endpoint = "x.sock";
        rr.resource_name = "a/b";
        rr.options = &o;
        const uint8_t reg[] = {0x0a, 7,   'v', '1', 'b',  'e', 't', 'a', '1', 0x12, 6, 'x',  '.',
                               's',  'o', 'c', 'k', 0x1a, 3,   'a', '/', 'b', 0x22, 2, 0x10, 0x01};
        expect_bytes(&rr.base, reg, sizeof reg);

        /* DRA v1 share_id has presence: set to "" it is still sent */
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device dv = K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE__INIT;
        expect_bytes(&dv.base, NULL, 0);
        dv.share_id_presence_case = K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE__SHARE_ID_PRESENCE_SHARE_ID;
        dv.share_id = "";
        const uint8_t share[] = {0x2a, 0x00};
        expect_bytes(&dv.base, share, sizeof share);

        /* a v1beta1 reader skips it (unknown field) */
        const uint8_t newer[] = {0x12, 0x01, 'p', 0x2a, 0x02, 's', '1'};
        ProtobufCMessage *m;
        ASSERT_OK(dp_proto_unpack(&k8s__io__kubelet__pkg__apis__dra__v1beta1__device__descriptor, newer, sizeof newer,
                                  &m));
        ASSERT_STREQ(((K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__Device *)m)->pool_name, "p");
        protobuf_c_message_free_unpacked(m, NULL);
        ASSERT_OK(dp_proto_unpack(&k8s__io__kubelet__pkg__apis__dra__v1__device__descriptor, newer, sizeof newer, &m));
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device *v1d = (K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device *)m;
        ASSERT_EQ(v1d->share_id_presence_case,
                  K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE__SHARE_ID_PRESENCE_SHARE_ID);
        ASSERT_STREQ(v1d->share_id, "s1");
        protobuf_c_message_free_unpacked(m, NULL);

        /* DRA health enum */
        V1alpha1__DeviceHealth h = V1ALPHA1__DEVICE_HEALTH__INIT;
        h.health = V1ALPHA1__HEALTH_STATUS__UNHEALTHY;
        h.last_updated_time = 1;
        const uint8_t health[] = {0x10, 0x02, 0x18, 0x01};
        expect_bytes(&h.base, health, sizeof health);
}

TEST(unpack_limits_and_garbage) {
        ProtobufCMessage *m;
        static uint8_t big[DP_PROTO_MAX_MESSAGE_SIZE + 1];
        ASSERT_EQ(dp_proto_unpack(&v1beta1__empty__descriptor, big, sizeof big, &m), -E2BIG);
        const uint8_t bad[] = {0x0a, 0x10, 'x'}; /* length past the end */
        ASSERT_EQ(dp_proto_unpack(&v1beta1__device__descriptor, bad, sizeof bad, &m), -EBADMSG);
        const uint8_t wrongtype[] = {0x08, 0x01}; /* field 1 as varint, declared string */
        ASSERT_EQ(dp_proto_unpack(&v1beta1__device__descriptor, wrongtype, sizeof wrongtype, &m), -EBADMSG);
        /* field number 0 is invalid even as an unknown field, also nested */
        const uint8_t zero[] = {0x85, 0x00, 0x00, 0x00, 0x00, 0x00};
        ASSERT_EQ(dp_proto_unpack(&pluginregistration__info_request__descriptor, zero, sizeof zero, &m), -EBADMSG);
        const uint8_t nested[] = {0x0a, 0x02, 0x00, 0x00};
        ASSERT_EQ(dp_proto_unpack(&v1beta1__list_and_watch_response__descriptor, nested, sizeof nested, &m), -EBADMSG);
        /* unknown fields with valid numbers are skipped */
        const uint8_t unknown[] = {0x0a, 0x01, 'a', 0x78, 0x05, 0x82, 0x01, 0x01, 'z'};
        ASSERT_OK(dp_proto_unpack(&v1beta1__device__descriptor, unknown, sizeof unknown, &m));
        ASSERT_STREQ(((V1beta1__Device *)m)->id, "a");
        protobuf_c_message_free_unpacked(m, NULL);
}

/* protobuf-c hands strings over NUL-terminated: "gpu-0\0x" would become
 * "gpu-0". Refused anywhere in the tree, as is invalid UTF-8 (Go refuses it). */
TEST(strings_with_nul_or_bad_utf8_refused) {
        ProtobufCMessage *m = NULL;
        dp_proto_bad_string bad = {0};
        const ProtobufCMessageDescriptor *d = &v1beta1__allocate_request__descriptor;
        /* AllocateRequest{container_requests: [{devices_ids: [X]}]} */
        ASSERT_EQ(dp_proto_unpack_checked(d, (const uint8_t *)"\x0a\x09\x0a\x07gpu-0\0x", 11, &m, &bad), -EILSEQ);
        ASSERT_TRUE(!m);
        ASSERT_STREQ(bad.message, "v1beta1.ContainerAllocateRequest");
        ASSERT_STREQ(bad.field, "devices_ids");
        ASSERT_STREQ(bad.why, "a NUL byte");
        ASSERT_EQ(dp_proto_unpack(d, (const uint8_t *)"\x0a\x07\x0a\x05gpu-\xc0", 9, &m), -EILSEQ);         /* cut */
        ASSERT_EQ(dp_proto_unpack(d, (const uint8_t *)"\x0a\x08\x0a\x06gp\xc0\xafu", 10, &m), -EILSEQ);     /* overlong */
        ASSERT_EQ(dp_proto_unpack(d, (const uint8_t *)"\x0a\x08\x0a\x06gp\xed\xa0\x80", 10, &m), -EILSEQ); /* surrogate */
        /* valid UTF-8 passes: "gpu-é", then "€" and U+1F600 */
        ASSERT_OK(dp_proto_unpack(d, (const uint8_t *)"\x0a\x08\x0a\x06gpu-\xc3\xa9", 10, &m));
        V1beta1__AllocateRequest *a = (V1beta1__AllocateRequest *)m;
        ASSERT_STREQ(a->container_requests[0]->devices_ids[0], "gpu-\xc3\xa9");
        protobuf_c_message_free_unpacked(m, NULL);
        ASSERT_OK(dp_proto_unpack(d, (const uint8_t *)"\x0a\x09\x0a\x07\xe2\x82\xac\xf0\x9f\x98\x80", 11, &m));
        protobuf_c_message_free_unpacked(m, NULL);
        /* a DRA claim uid: NodePrepareResourcesRequest{claims: [{uid: "u\0v"}]} */
        ASSERT_EQ(dp_proto_unpack_checked(&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor,
                                          (const uint8_t *)"\x0a\x05\x12\x03u\0v", 7, &m, &bad),
                  -EILSEQ);
        ASSERT_STREQ(bad.field, "uid");
}
