# SPDX-License-Identifier: Apache-2.0
"""Python classes for deviceplugin v1beta1, pluginregistration and DRA v1 messages, built at run time
from descriptors written here (grpc_tools is not available), so the interop
tests check our encoding against Google's protobuf runtime, not against
itself. Field numbers and names follow shared/reference/wire-protocols.md 2.2, 3.2, 4.2."""
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


_PLUGINREG = {
    "PluginInfo": [("type", 1, STRING, OPT, None), ("name", 2, STRING, OPT, None), ("endpoint", 3, STRING, OPT, None),
                   ("supported_versions", 4, STRING, REP, None)],
    "RegistrationStatus": [("plugin_registered", 1, BOOL, OPT, None), ("error", 2, STRING, OPT, None)],
    "RegistrationStatusResponse": [],
    "InfoRequest": [],
}

_DRA = {
    "Claim": [("namespace", 1, STRING, OPT, None), ("uid", 2, STRING, OPT, None), ("name", 3, STRING, OPT, None)],
    "NodePrepareResourcesRequest": [("claims", 1, MSG, REP, "Claim")],
    "Device": [("request_names", 1, STRING, REP, None), ("pool_name", 2, STRING, OPT, None),
               ("device_name", 3, STRING, OPT, None), ("cdi_device_ids", 4, STRING, REP, None),
               ("share_id", 5, STRING, OPT, "optional")],
    "NodePrepareResourceResponse": [("devices", 1, MSG, REP, "Device"), ("error", 2, STRING, OPT, None)],
    "NodePrepareResourcesResponse": [("claims", 1, MSG, REP, "NodePrepareResourcesResponse.ClaimsEntry")],
}
_DRA_MAPS = {"NodePrepareResourcesResponse": [("ClaimsEntry", "NodePrepareResourceResponse")]}


def _file(name, package, messages, maps):
    fdp = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    for mname, fields in messages.items():
        m = fdp.message_type.add(name=mname)
        for entry in maps.get(mname, []):
            ename, vtype = entry if isinstance(entry, tuple) else (entry, None)
            e = m.nested_type.add(name=ename)
            e.options.map_entry = True
            e.field.add(name="key", number=1, type=STRING, label=OPT)
            v = e.field.add(name="value", number=2, type=MSG if vtype else STRING, label=OPT)
            if vtype:
                v.type_name = "." + package + "." + vtype
        for fname, num, typ, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname == "optional":  # proto3 optional: a synthetic oneof
                f.proto3_optional = True
                f.oneof_index = len(m.oneof_decl)
                m.oneof_decl.add(name="_" + fname)
            elif tname:
                f.type_name = "." + package + "." + tname
    return fdp


def _build():
    pool = descriptor_pool.DescriptorPool()
    files = [("v1beta1", _file("devplane_interop_v1beta1.proto", "v1beta1", _MESSAGES, _MAPS), _MESSAGES),
             ("pluginregistration", _file("devplane_interop_pluginreg.proto", "pluginregistration", _PLUGINREG, {}),
              _PLUGINREG),
             ("k8s.io.kubelet.pkg.apis.dra.v1",
              _file("devplane_interop_dra_v1.proto", "k8s.io.kubelet.pkg.apis.dra.v1", _DRA, _DRA_MAPS), _DRA)]
    factory = message_factory.MessageFactory(pool)
    out = {}
    for package, fdp, messages in files:
        pool.Add(fdp)
        for n in messages:
            cls = factory.GetPrototype(pool.FindMessageTypeByName(package + "." + n))
            out[n if package == "v1beta1" else package.split(".")[-1] + "." + n] = cls
    return out


# "AllocateRequest" (v1beta1), "pluginregistration.PluginInfo", "v1.Claim" (DRA v1)
pb = _build()
