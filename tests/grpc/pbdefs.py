# SPDX-License-Identifier: Apache-2.0
"""Python classes for the deviceplugin v1beta1 messages, built at run time
from descriptors written here (grpc_tools is not available), so the interop
tests check our encoding against Google's protobuf runtime, not against
itself. Field numbers and names follow shared/reference/wire-protocols.md 2.2."""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
STRING, BOOL, INT32, INT64, MSG = _F.TYPE_STRING, _F.TYPE_BOOL, _F.TYPE_INT32, _F.TYPE_INT64, _F.TYPE_MESSAGE
OPT, REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

# name -> [(field, number, type, label, message type)]
_MESSAGES = {
    "Empty": [],
    "DevicePluginOptions": [("pre_start_required", 1, BOOL, OPT, None),
                            ("get_preferred_allocation_available", 2, BOOL, OPT, None)],
    "RegisterRequest": [("version", 1, STRING, OPT, None), ("endpoint", 2, STRING, OPT, None),
                        ("resource_name", 3, STRING, OPT, None), ("options", 4, MSG, OPT, "DevicePluginOptions")],
    "NUMANode": [("ID", 1, INT64, OPT, None)],
    "TopologyInfo": [("nodes", 1, MSG, REP, "NUMANode")],
    "Device": [("ID", 1, STRING, OPT, None), ("health", 2, STRING, OPT, None),
               ("topology", 3, MSG, OPT, "TopologyInfo")],
    "ListAndWatchResponse": [("devices", 1, MSG, REP, "Device")],
    "ContainerAllocateRequest": [("devices_ids", 1, STRING, REP, None)],
    "AllocateRequest": [("container_requests", 1, MSG, REP, "ContainerAllocateRequest")],
    "Mount": [("container_path", 1, STRING, OPT, None), ("host_path", 2, STRING, OPT, None),
              ("read_only", 3, BOOL, OPT, None)],
    "DeviceSpec": [("container_path", 1, STRING, OPT, None), ("host_path", 2, STRING, OPT, None),
                   ("permissions", 3, STRING, OPT, None)],
    "CDIDevice": [("name", 1, STRING, OPT, None)],
    "ContainerAllocateResponse": [("envs", 1, MSG, REP, "ContainerAllocateResponse.EnvsEntry"),
                                  ("mounts", 2, MSG, REP, "Mount"), ("devices", 3, MSG, REP, "DeviceSpec"),
                                  ("annotations", 4, MSG, REP, "ContainerAllocateResponse.AnnotationsEntry"),
                                  ("cdi_devices", 5, MSG, REP, "CDIDevice")],
    "AllocateResponse": [("container_responses", 1, MSG, REP, "ContainerAllocateResponse")],
}
_MAPS = {"ContainerAllocateResponse": ["EnvsEntry", "AnnotationsEntry"]}


def _build():
    fdp = descriptor_pb2.FileDescriptorProto(name="devplane_interop_v1beta1.proto", package="v1beta1",
                                             syntax="proto3")
    for name, fields in _MESSAGES.items():
        m = fdp.message_type.add(name=name)
        for entry in _MAPS.get(name, []):
            e = m.nested_type.add(name=entry)
            e.options.map_entry = True
            e.field.add(name="key", number=1, type=STRING, label=OPT)
            e.field.add(name="value", number=2, type=STRING, label=OPT)
        for fname, num, typ, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname:
                f.type_name = ".v1beta1." + tname
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    factory = message_factory.MessageFactory(pool)
    return {n: factory.GetPrototype(pool.FindMessageTypeByName("v1beta1." + n)) for n in _MESSAGES}


pb = _build()
