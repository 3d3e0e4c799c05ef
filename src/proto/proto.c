/* SPDX-License-Identifier: Apache-2.0
 * proto.c — size-capped pack/unpack of the generated protobuf-c messages
 * (proto.h), with the checks protobuf-c leaves out and its allocations made
 * through devplane's own malloc. */
#include "proto/proto.h"

#include "base/utf8.h"

int dp_proto_pack(const ProtobufCMessage *msg, uint8_t **ret_data, size_t *ret_len) {
        assert_return(msg && ret_data && ret_len, -EINVAL);
        size_t n = protobuf_c_message_get_packed_size(msg);
        if (n > INT32_MAX) return -E2BIG;
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf) return -ENOMEM;
        size_t w = protobuf_c_message_pack(msg, buf);
        assert(w == n);
        (void)w;
        *ret_data = buf;
        *ret_len = n;
        return 0;
}

/* protobuf-c keeps fields it does not know, including field number 0, which
 * the protobuf spec forbids and every Go decoder rejects (and protobuf-c
 * itself refuses once re-encoded). Reject it anywhere in the tree. */
static bool unknown_fields_valid(const ProtobufCMessage *m, unsigned depth) {
        if (depth > 100) return false;
        for (unsigned i = 0; i < m->n_unknown_fields; i++)
                if (m->unknown_fields[i].tag == 0) return false;
        const ProtobufCMessageDescriptor *d = m->descriptor;
        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                if (f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
                const char *base = (const char *)m;
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        size_t n = *(const size_t *)(base + f->quantifier_offset);
                        ProtobufCMessage *const *arr = *(ProtobufCMessage *const *const *)(base + f->offset);
                        for (size_t k = 0; k < n; k++)
                                if (arr[k] && !unknown_fields_valid(arr[k], depth + 1)) return false;
                } else {
                        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                            *(const uint32_t *)(base + f->quantifier_offset) != f->id)
                                continue;
                        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + f->offset);
                        if (sub && !unknown_fields_valid(sub, depth + 1)) return false;
                }
        }
        return true;
}

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *ret) {
        uint64_t v = 0;
        for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
                uint8_t b = *(*p)++;
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *ret = v;
                        return true;
                }
        }
        return false;
}

/* Walk the wire form of a message protobuf-c accepted: every string field,
 * nested ones included, must be UTF-8 without a NUL byte. protobuf-c hands
 * strings over NUL-terminated, so "gpu-0\0x" would silently become "gpu-0". */
static int check_strings(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end, unsigned depth,
                         dp_proto_bad_string *ret) {
        if (depth > 100) return -EBADMSG;
        while (p < end) {
                uint64_t tag, len;
                if (!read_varint(&p, end, &tag)) return -EBADMSG;
                switch (tag & 7) {
                case 0:
                        if (!read_varint(&p, end, &len)) return -EBADMSG;
                        break;
                case 1:
                        if (end - p < 8) return -EBADMSG;
                        p += 8;
                        break;
                case 5:
                        if (end - p < 4) return -EBADMSG;
                        p += 4;
                        break;
                case 2: {
                        if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) return -EBADMSG;
                        const ProtobufCFieldDescriptor *f =
                                tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
                                                       : NULL;
                        if (f && f->type == PROTOBUF_C_TYPE_STRING) {
                                bool nul = memchr(p, 0, len) != NULL;
                                if (nul || !dp_utf8_valid(p, len) /* strict, as Go's proto3 decoder */) {
                                        if (ret)
                                                *ret = (dp_proto_bad_string){d->name, f->name,
                                                                             nul ? "a NUL byte" : "invalid UTF-8"};
                                        return -EILSEQ;
                                }
                        } else if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                                int r = check_strings(f->descriptor, p, p + len, depth + 1, ret);
                                if (r < 0) return r;
                        }
                        p += len;
                        break;
                }
                default:
                        return -EBADMSG; /* groups: in none of these APIs */
                }
        }
        return 0;
}

/* protobuf-c allocates through the ProtobufCAllocator it is handed (NULL: its
 * own malloc, made inside libprotobuf-c where nothing can fail it). Ours
 * allocates with malloc from devplane's own code, so the failmalloc tests fail
 * protobuf-c's allocations like any other, and notes a failure, so that a
 * message protobuf-c gave up on for want of memory comes back -ENOMEM rather
 * than -EBADMSG (protobuf-c returns NULL for both). Memory it hands out is
 * libc's: protobuf_c_message_free_unpacked(m, NULL) frees it. */
typedef struct unpack_state {
        bool oom;
} unpack_state;

static void *unpack_alloc(void *data, size_t size) {
        void *p = malloc(size ? size : 1);
        if (!p) ((unpack_state *)data)->oom = true;
        return p;
}

static void unpack_free(void *data, void *p) {
        (void)data;
        free(p);
}

static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                                bool *ret_oom) {
        static const uint8_t empty[1];
        unpack_state st = {false};
        ProtobufCAllocator a = {.alloc = unpack_alloc, .free = unpack_free, .allocator_data = &st};
        ProtobufCMessage *m = protobuf_c_message_unpack(desc, &a, len, data ? data : empty);
        *ret_oom = st.oom;
        return m;
}

int dp_proto_unpack_checked(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                            ProtobufCMessage **ret, dp_proto_bad_string *ret_bad) {
        assert_return(desc && (data || len == 0) && ret, -EINVAL);
        if (len > DP_PROTO_MAX_MESSAGE_SIZE) return -E2BIG;
        bool oom;
        ProtobufCMessage *m = unpack(desc, data, len, &oom);
        if (!m) return oom ? -ENOMEM : -EBADMSG;
        int r = !unknown_fields_valid(m, 0) ? -EBADMSG : len ? check_strings(desc, data, data + len, 0, ret_bad) : 0;
        if (r < 0) {
                protobuf_c_message_free_unpacked(m, NULL);
                return r;
        }
        *ret = m;
        return 0;
}

int dp_proto_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len, ProtobufCMessage **ret) {
        return dp_proto_unpack_checked(desc, data, len, ret, NULL);
}

static const ProtobufCMessageDescriptor *const all_messages[] = {
        &v1beta1__device_plugin_options__descriptor,
        &v1beta1__register_request__descriptor,
        &v1beta1__empty__descriptor,
        &v1beta1__list_and_watch_response__descriptor,
        &v1beta1__topology_info__descriptor,
        &v1beta1__numanode__descriptor,
        &v1beta1__device__descriptor,
        &v1beta1__pre_start_container_request__descriptor,
        &v1beta1__pre_start_container_response__descriptor,
        &v1beta1__preferred_allocation_request__descriptor,
        &v1beta1__container_preferred_allocation_request__descriptor,
        &v1beta1__preferred_allocation_response__descriptor,
        &v1beta1__container_preferred_allocation_response__descriptor,
        &v1beta1__allocate_request__descriptor,
        &v1beta1__container_allocate_request__descriptor,
        &v1beta1__cdidevice__descriptor,
        &v1beta1__allocate_response__descriptor,
        &v1beta1__container_allocate_response__descriptor,
        &v1beta1__mount__descriptor,
        &v1beta1__device_spec__descriptor,
        &v1__node_watch_resources_request__descriptor,
        &v1__device_identifier__descriptor,
        &v1__device_health__descriptor,
        &v1__node_watch_resources_response__descriptor,
        &v1alpha1__node_watch_resources_request__descriptor,
        &v1alpha1__device_identifier__descriptor,
        &v1alpha1__device_health__descriptor,
        &v1alpha1__node_watch_resources_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__device__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1__claim__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_request__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resource_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__device__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resources_request__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resources_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resource_response__descriptor,
        &k8s__io__kubelet__pkg__apis__dra__v1beta1__claim__descriptor,
        &pluginregistration__plugin_info__descriptor,
        &pluginregistration__registration_status__descriptor,
        &pluginregistration__registration_status_response__descriptor,
        &pluginregistration__info_request__descriptor,
};

const ProtobufCMessageDescriptor *const *dp_proto_all_messages(size_t *ret_n) {
        if (ret_n) *ret_n = ELEMENTSOF(all_messages);
        return all_messages;
}

const ProtobufCMessageDescriptor *dp_proto_find_message(const char *full_name) {
        if (!full_name) return NULL;
        for (size_t i = 0; i < ELEMENTSOF(all_messages); i++)
                if (streq(all_messages[i]->name, full_name)) return all_messages[i];
        return NULL;
}
