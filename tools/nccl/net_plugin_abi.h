/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * net_plugin_abi.h - the NCCL network plugin ABI, as libnccl-net-mrc.so
 * exports it and nccl_harness loads it.
 *
 * Written for mrc from NCCL's public plugin documentation: NVIDIA/nccl
 * ext-net/README.md (the loading rules, the call semantics, the error
 * codes), with the layouts of the ext-net example's nccl/net_v8.h ..
 * net_v11.h, nccl/err.h, nccl/net_device.h and of NCCL's own
 * src/include/plugin/net/net_v11.h and net_v12.h (headers of 2017-2026).
 * What must match is the layout: the order and C types of the fields and
 * of the function pointers, and the argument types of each.  The names are
 * NCCL's, so that the two can be read side by side; the text is ours.
 *
 * NCCL dlopen()s libnccl-net-${NCCL_NET_PLUGIN}.so and looks for the
 * newest symbol ncclNetPlugin_vN it knows, then older ones.  The struct
 * versions declared here, and the NCCL releases whose newest one each is
 * (each release loads the older versions too, down to v6):
 *
 *   v8   NCCL 2.20 - 2.21  regMr() takes a size_t; regIsGlobal; 32 requests
 *                          per comm (NCCL_NET_MAX_REQUESTS; 8 before)
 *   v9   NCCL 2.22 - 2.24  size_t message sizes in isend()/irecv();
 *                          forceFlush, virtual NICs (vProps, makeVDevice),
 *                          maxP2pBytes, maxCollBytes
 *   v10  NCCL 2.25 - 2.27  init() takes a profiler callback; connect() a
 *                          per-comm config (trafficClass); isend()/irecv()
 *                          a profiler handle per request
 *   v11  NCCL 2.28         a context per communicator: init() returns it,
 *                          listen(), connect() and finalize() take it, the
 *                          config moves to init(); setNetAttr();
 *                          maxMultiRequestSize
 *   v12  NCCL 2.29         8 devices per virtual NIC (4 before); railId
 *                          and planeId in the properties
 *
 * The release ranges are from NCCL's history as far as it could be read
 * (v8 first in 2.20.3, v12 the newest in 2.29); the layouts are what
 * matters, and are checked by the _Static_asserts at the end for LP64.
 */
#ifndef MRC_NCCL_NET_PLUGIN_ABI_H
#define MRC_NCCL_NET_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

/*
 * Return code of every call.  The plugin uses ncclSystemError for a
 * failed system call, ncclRemoteError for a peer that refused, reset or
 * closed, ncclInternalError for a call NCCL should never make (a bad
 * comm, request or handle) and ncclInvalidUsage for a user's mistake (a
 * receive buffer smaller than the message, tags that do not match).
 */
typedef enum {
	ncclSuccess		= 0,
	ncclUnhandledCudaError	= 1,
	ncclSystemError		= 2,
	ncclInternalError	= 3,
	ncclInvalidArgument	= 4,
	ncclInvalidUsage	= 5,
	ncclRemoteError		= 6,
	ncclInProgress		= 7,
} ncclResult_t;

/* The handle listen() fills and connect() reads: NCCL exchanges it. */
#define NCCL_NET_HANDLE_MAXSIZE		128

/* ptrSupport bits, and the type argument of regMr() */
#define NCCL_PTR_HOST			0x1
#define NCCL_PTR_CUDA			0x2
#define NCCL_PTR_DMABUF			0x4

/*
 * Requests a comm must hold in flight (v8 and later; 8 before).  A send
 * comm must hold this many times the peer's maxRecvs.
 */
#define NCCL_NET_MAX_REQUESTS		32

/* The largest message NCCL hands a plugin (its MAX_NET_SIZE) */
#define NCCL_NET_MAX_MSG_BYTES		(1024L * 1024 * 1024)

/* The logger NCCL passes to init() */
typedef enum {
	NCCL_LOG_NONE		= 0,
	NCCL_LOG_VERSION	= 1,
	NCCL_LOG_WARN		= 2,
	NCCL_LOG_INFO		= 3,
	NCCL_LOG_ABORT		= 4,
	NCCL_LOG_TRACE		= 5,
} ncclDebugLogLevel;

/* Subsystem flags of a log line (a bit mask) */
#define NCCL_INIT			0x1
#define NCCL_NET			0x10
#define NCCL_ALL			(~0UL)

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags,
				  const char *file, int line, const char *fmt, ...);

/* v10 and later: NCCL's profiler hook for events the plugin defines */
typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type, void *pHandle,
					       int64_t pluginId, void *extData);

/* Device offload (GPU-side networking); a host plugin reports HOST. */
typedef enum {
	NCCL_NET_DEVICE_HOST	= 0,
	NCCL_NET_DEVICE_UNPACK	= 1,
} ncclNetDeviceType;

#define NCCL_NET_DEVICE_INVALID_VERSION	0x0

/*
 * What connect()/accept() may be asked to fill for device offload: one
 * layout from v7 to v12.  A host plugin never touches it.
 */
typedef struct {
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	void *handle;
	size_t size;
	int needsProxyProgress;
} ncclNetDeviceHandle_v8_t;

typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v11_t;
typedef ncclNetDeviceHandle_v8_t ncclNetDeviceHandle_v12_t;

/* v10 and later: per-comm settings; trafficClass is the plugin's to read */
#define NCCL_NET_TRAFFIC_CLASS_UNDEF	-1

typedef struct {
	int trafficClass;
} ncclNetCommConfig_v10_t;

typedef ncclNetCommConfig_v10_t ncclNetCommConfig_v11_t;
typedef ncclNetCommConfig_v10_t ncclNetCommConfig_v12_t;

/* A virtual NIC's member devices (v9 to v11: 4 at most, v12: 8) */
typedef struct {
	int ndevs;
	int devs[4];
} ncclNetVDeviceProps_v9_t;

typedef ncclNetVDeviceProps_v9_t ncclNetVDeviceProps_v10_t;
typedef ncclNetVDeviceProps_v9_t ncclNetVDeviceProps_v11_t;

typedef struct {
	int ndevs;
	int devs[8];
} ncclNetVDeviceProps_v12_t;

/* v12: railId and planeId when the device belongs to none */
#define NCCL_NET_ID_UNDEF		-1

/*
 * Device properties.  Each version is a superset of the one before in
 * meaning, not in layout: fields were inserted (forceFlush in v9), so
 * every version has its own struct.
 */
typedef struct {
	char *name;			/* for logs */
	char *pciPath;			/* sysfs PCI path, NULL for a virtual device */
	uint64_t guid;			/* devices sharing a port share a guid */
	int ptrSupport;			/* NCCL_PTR_* bits */
	int regIsGlobal;		/* a registration is valid on every comm */
	int speed;			/* Mb/s */
	int port;
	float latency;			/* microseconds */
	int maxComms;
	int maxRecvs;			/* receives grouped in one irecv() */
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v8_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int forceFlush;			/* NCCL must flush every receive */
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	ncclNetVDeviceProps_v9_t vProps;	/* physical devices behind this one */
	size_t maxP2pBytes;		/* largest message, point to point */
	size_t maxCollBytes;		/* largest message, collectives */
} ncclNetProperties_v9_t;

typedef ncclNetProperties_v9_t ncclNetProperties_v10_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int forceFlush;
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	ncclNetVDeviceProps_v11_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
	int maxMultiRequestSize;	/* requests one multi-request may carry */
} ncclNetProperties_v11_t;

typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int forceFlush;
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	ncclNetVDeviceProps_v12_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
	int maxMultiRequestSize;
	int16_t railId;			/* NCCL_NET_ID_UNDEF: none */
	int16_t planeId;		/* NCCL_NET_ID_UNDEF: none, or all of them */
} ncclNetProperties_v12_t;

/* v11 and later: hints NCCL gives a context about the traffic to come */
typedef struct {
	int32_t maxConcurrentPeers;
	int32_t minConcurrentPeers;
	int32_t maxFlowsPerPeer;
	int32_t minFlowsPerPeer;
} ncclNetCommAttr_v11_t;

typedef struct {
	ncclNetCommAttr_v11_t sendCommAttr;
	ncclNetCommAttr_v11_t recvCommAttr;
	uint32_t op;
	uint32_t algo;
	uint32_t proto;
} ncclNetAttr_v11_t;

typedef ncclNetCommAttr_v11_t ncclNetCommAttr_v12_t;
typedef ncclNetAttr_v11_t ncclNetAttr_v12_t;

/*
 * The function tables.  Common rules (README): listen() never blocks and
 * always returns a comm; connect() and accept() never block and return a
 * NULL comm until the connection is up, to be called again; isend() and
 * irecv() may return a NULL request when they cannot start (would block);
 * test() sets done and, once done, the sizes moved, after which the
 * request is gone.  Sends and receives on a comm match in posting order.
 */
typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v8_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v8_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type,
				    uint64_t offset, int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag, void *mhandle,
			      void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes, int *tags,
			      void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v8_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v9_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v9_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v9_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type,
				    uint64_t offset, int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v9_t *props);
} ncclNet_v9_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v10_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, ncclNetCommConfig_v10_t *config, void *handle,
				void **sendComm, ncclNetDeviceHandle_v10_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v10_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type,
				    uint64_t offset, int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v10_t *props);
} ncclNet_v10_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
			     ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v11_t *props);
	ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v11_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v11_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type,
				    uint64_t offset, int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v11_t *props);
	ncclResult_t (*finalize)(void *ctx);
	ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v11_t *netAttr);
} ncclNet_v11_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **ctx, uint64_t commId, ncclNetCommConfig_v12_t *config,
			     ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v12_t *props);
	ncclResult_t (*listen)(void *ctx, int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(void *ctx, int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v12_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v12_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type, void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size, int type,
				    uint64_t offset, int fd, void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, size_t size, int tag, void *mhandle,
			      void *phandle, void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, size_t *sizes, int *tags,
			      void **mhandles, void **phandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes, void **mhandles,
			       void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle, void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v12_t *props);
	ncclResult_t (*finalize)(void *ctx);
	ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v12_t *netAttr);
} ncclNet_v12_t;

/* The exported symbols, newest first: what NCCL and nccl_harness look up */
#define NCCL_NET_PLUGIN_SYMBOL_V12	"ncclNetPlugin_v12"
#define NCCL_NET_PLUGIN_SYMBOL_V11	"ncclNetPlugin_v11"
#define NCCL_NET_PLUGIN_SYMBOL_V10	"ncclNetPlugin_v10"
#define NCCL_NET_PLUGIN_SYMBOL_V9	"ncclNetPlugin_v9"
#define NCCL_NET_PLUGIN_SYMBOL_V8	"ncclNetPlugin_v8"

/*
 * The layouts on LP64 (x86_64, aarch64), the only ABI NCCL ships for:
 * offsets worked out by hand from the field list above, so that an edit
 * that moves a field fails the build instead of corrupting NCCL's view.
 */
#if defined(__LP64__)
_Static_assert(sizeof(ncclNetProperties_v8_t) == 64, "v8 properties");
_Static_assert(offsetof(ncclNetProperties_v8_t, speed) == 32, "v8 speed");
_Static_assert(offsetof(ncclNetProperties_v8_t, netDeviceVersion) == 56, "v8 tail");
_Static_assert(sizeof(ncclNetProperties_v9_t) == 104, "v9 properties");
_Static_assert(offsetof(ncclNetProperties_v9_t, speed) == 36, "v9 speed");
_Static_assert(offsetof(ncclNetProperties_v9_t, vProps) == 64, "v9 vProps");
_Static_assert(offsetof(ncclNetProperties_v9_t, maxP2pBytes) == 88, "v9 maxP2pBytes");
_Static_assert(sizeof(ncclNetProperties_v11_t) == 112, "v11 properties");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize) == 104, "v11 tail");
_Static_assert(sizeof(ncclNetProperties_v12_t) == 128, "v12 properties");
_Static_assert(offsetof(ncclNetProperties_v12_t, maxP2pBytes) == 104, "v12 maxP2pBytes");
_Static_assert(offsetof(ncclNetProperties_v12_t, railId) == 124, "v12 railId");
_Static_assert(offsetof(ncclNetProperties_v12_t, planeId) == 126, "v12 planeId");
_Static_assert(sizeof(ncclNet_v8_t) == 19 * sizeof(void *), "v8 table");
_Static_assert(sizeof(ncclNet_v9_t) == 20 * sizeof(void *), "v9 table");
_Static_assert(sizeof(ncclNet_v10_t) == 20 * sizeof(void *), "v10 table");
_Static_assert(sizeof(ncclNet_v11_t) == 22 * sizeof(void *), "v11 table");
_Static_assert(sizeof(ncclNet_v12_t) == 22 * sizeof(void *), "v12 table");
_Static_assert(offsetof(ncclNet_v12_t, setNetAttr) == 21 * sizeof(void *), "v12 last");
_Static_assert(sizeof(ncclNetDeviceHandle_v8_t) == 32, "device handle");
_Static_assert(sizeof(ncclNetAttr_v11_t) == 44, "net attributes");
#endif

#endif /* MRC_NCCL_NET_PLUGIN_ABI_H */
