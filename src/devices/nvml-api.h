/* SPDX-License-Identifier: Apache-2.0
 *
 * nvml-api.h — the subset of NVIDIA's NVML C API that the nvml backend
 * uses, declared from NVIDIA's published API reference (names, values,
 * struct layouts, calling conventions). devplane never links against NVML:
 * backend-nvml.c dlopen()s libnvidia-ml.so.1 and resolves each symbol by
 * its exported name (versioned names such as nvmlInit_v2 are what the
 * library exports), so this header only supplies the types and the
 * function-pointer shapes. tests/devices/fake-nvml implements the same
 * subset.
 *
 * Facts used (NVML API reference, "Device Queries", "Event Handling",
 * "Multi Instance GPU Management"):
 *   - all calls return nvmlReturn_t, 0 = NVML_SUCCESS;
 *   - handles are opaque pointers;
 *   - nvmlEventSetWait_v2 blocks up to timeoutms and returns
 *     NVML_ERROR_TIMEOUT when nothing happened;
 *   - event data carries GPU/compute instance ids for MIG devices,
 *     0xFFFFFFFF when the event is not scoped to one;
 *   - PCI bus ids are "DDDDDDDD:BB:DD.F" (8-digit domain).
 */
#pragma once

typedef enum nvmlReturn_enum {
        NVML_SUCCESS = 0,
        NVML_ERROR_UNINITIALIZED = 1,
        NVML_ERROR_INVALID_ARGUMENT = 2,
        NVML_ERROR_NOT_SUPPORTED = 3,
        NVML_ERROR_NO_PERMISSION = 4,
        NVML_ERROR_ALREADY_INITIALIZED = 5,
        NVML_ERROR_NOT_FOUND = 6,
        NVML_ERROR_INSUFFICIENT_SIZE = 7,
        NVML_ERROR_INSUFFICIENT_POWER = 8,
        NVML_ERROR_DRIVER_NOT_LOADED = 9,
        NVML_ERROR_TIMEOUT = 10,
        NVML_ERROR_IRQ_ISSUE = 11,
        NVML_ERROR_LIBRARY_NOT_FOUND = 12,
        NVML_ERROR_FUNCTION_NOT_FOUND = 13,
        NVML_ERROR_CORRUPTED_INFOROM = 14,
        NVML_ERROR_GPU_IS_LOST = 15,
        NVML_ERROR_RESET_REQUIRED = 16,
        NVML_ERROR_OPERATING_SYSTEM = 17,
        NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
        NVML_ERROR_IN_USE = 19,
        NVML_ERROR_MEMORY = 20,
        NVML_ERROR_NO_DATA = 21,
        NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

typedef struct nvmlPciInfo_st {
        char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
        unsigned int domain;
        unsigned int bus;
        unsigned int device;
        unsigned int pciDeviceId; /* (device id << 16) | vendor id */
        unsigned int pciSubSystemId;
        char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
        unsigned long long total; /* bytes */
        unsigned long long free;
        unsigned long long used;
} nvmlMemory_t;

typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_MAXWELL 3
#define NVML_DEVICE_ARCH_PASCAL 4
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_BLACKWELL 10
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffu

#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/* Profile indices for nvmlDeviceGetGpuInstanceProfileInfo (not profile ids). */
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x0f /* indices 0 .. COUNT-1 are probed */
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT 0x08
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0

typedef struct nvmlGpuInstancePlacement_st {
        unsigned int start;
        unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceInfo_st {
        nvmlDevice_t device;
        unsigned int id;
        unsigned int profileId;
        nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
        unsigned int id;
        unsigned int isP2pSupported;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int copyEngineCount;
        unsigned int decoderCount;
        unsigned int encoderCount;
        unsigned int jpegCount;
        unsigned int ofaCount;
        unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
        unsigned int start;
        unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceInfo_st {
        nvmlDevice_t device;
        nvmlGpuInstance_t gpuInstance;
        unsigned int id;
        unsigned int profileId;
        nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef enum nvmlGpuP2PCapsIndex_enum {
        NVML_P2P_CAPS_INDEX_READ = 0,
        NVML_P2P_CAPS_INDEX_WRITE = 1,
        NVML_P2P_CAPS_INDEX_NVLINK = 2,
        NVML_P2P_CAPS_INDEX_ATOMICS = 3,
        NVML_P2P_CAPS_INDEX_PROP = 4,
        NVML_P2P_CAPS_INDEX_UNKNOWN = 5,
} nvmlGpuP2PCapsIndex_t;

typedef enum nvmlGpuP2PStatus_enum {
        NVML_P2P_STATUS_OK = 0,
        NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED = 1,
        NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
        NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
        NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
        NVML_P2P_STATUS_NOT_SUPPORTED = 5,
        NVML_P2P_STATUS_UNKNOWN = 6,
} nvmlGpuP2PStatus_t;

/* Event types (bit mask). */
#define nvmlEventTypeSingleBitEccError 0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002ULL
#define nvmlEventTypePState 0x0000000000000004ULL
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
#define nvmlEventTypeClock 0x0000000000000010ULL
#define nvmlEventTypeMigConfigChange 0x0000000000000100ULL

typedef struct nvmlEventData_st {
        nvmlDevice_t device;
        unsigned long long eventType;
        unsigned long long eventData; /* the Xid number for XidCriticalError */
        unsigned int gpuInstanceId;   /* 0xFFFFFFFF: not scoped to a MIG instance */
        unsigned int computeInstanceId;
} nvmlEventData_t;

#define DP_NVML_NO_INSTANCE 0xFFFFFFFFu

/* const char *nvmlErrorString(nvmlReturn_t result): the one call that does
 * not return nvmlReturn_t (resolved on its own, optional). */
typedef const char *(*dp_nvmlErrorString_fn)(nvmlReturn_t result);

/* The functions returning nvmlReturn_t, as exported symbol names and their
 * parameters: X(required, symbol, (parameters)). Required ones must resolve
 * or the backend refuses to open; optional ones degrade (no NUMA from NVML:
 * sysfs is read; no MIG calls: MIG is reported off; ...). */
#define DP_NVML_FUNCS(X)                                                                                               \
        X(1, nvmlInit_v2, (void))                                                                                      \
        X(1, nvmlShutdown, (void))                                                                                     \
        X(1, nvmlSystemGetDriverVersion, (char *version, unsigned int length))                                         \
        X(0, nvmlSystemGetCudaDriverVersion_v2, (int *cudaDriverVersion))                                              \
        X(1, nvmlDeviceGetCount_v2, (unsigned int *deviceCount))                                                       \
        X(1, nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *device))                                \
        X(1, nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length))                                \
        X(1, nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length))                                \
        X(0, nvmlDeviceGetArchitecture, (nvmlDevice_t device, nvmlDeviceArchitecture_t * arch))                        \
        X(1, nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t * memory))                                    \
        X(1, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t * pci))                                      \
        X(0, nvmlDeviceGetNumaNodeId, (nvmlDevice_t device, unsigned int *node))                                       \
        X(1, nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int *minorNumber))                               \
        X(0, nvmlDeviceGetCudaComputeCapability, (nvmlDevice_t device, int *major, int *minor))                        \
        X(0, nvmlDeviceGetMigMode, (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode))        \
        X(0, nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int *count))                               \
        X(0, nvmlDeviceGetMigDeviceHandleByIndex, (nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice))  \
        X(0, nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int *id))                                      \
        X(0, nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int *id))                                  \
        X(0, nvmlDeviceGetGpuInstanceById, (nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance))     \
        X(0, nvmlGpuInstanceGetInfo, (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t * info))                    \
        X(0, nvmlDeviceGetGpuInstanceProfileInfo,                                                                      \
          (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info))                             \
        X(0, nvmlGpuInstanceGetComputeInstanceById,                                                                    \
          (nvmlGpuInstance_t gpuInstance, unsigned int id, nvmlComputeInstance_t *computeInstance))                    \
        X(0, nvmlComputeInstanceGetInfo_v2, (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t * info)) \
        X(0, nvmlGpuInstanceGetComputeInstanceProfileInfo,                                                             \
          (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,                               \
           nvmlComputeInstanceProfileInfo_t *info))                                                                    \
        X(0, nvmlDeviceGetP2PStatus,                                                                                   \
          (nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,                                 \
           nvmlGpuP2PStatus_t * p2pStatus))                                                                            \
        X(1, nvmlEventSetCreate, (nvmlEventSet_t * set))                                                               \
        X(1, nvmlDeviceRegisterEvents, (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set))       \
        X(0, nvmlDeviceGetSupportedEventTypes, (nvmlDevice_t device, unsigned long long *eventTypes))                  \
        X(1, nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeoutms))                \
        X(1, nvmlEventSetFree, (nvmlEventSet_t set))
