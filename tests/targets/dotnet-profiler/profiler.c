/* SPDX-License-Identifier: MIT */
/*
 * profiler.c - a tiny CLR profiler for rtdiag's integration tests: it does
 * nothing but prove that the runtime loaded it and called its entry points.
 *
 * Built as a shared library (cc -shared -fPIC) by
 * tests/integration/dotnet/test_profiler.sh. The runtime dlopen()s it, calls
 * DllGetClassObject(CLSID, IID_IClassFactory) and the factory's
 * CreateInstance, then calls the callback object through its vtable:
 *   slot 3  ICorProfilerCallback::Initialize            (startup load)
 *   slot 80 ICorProfilerCallback3::InitializeForAttach  (attach)
 *   slot 81 ICorProfilerCallback3::ProfilerAttachComplete
 * Slot numbers from dotnet/runtime src/coreclr/inc/corprof.idl: IUnknown has
 * 3 methods, ICorProfilerCallback 69 (Initialize .. ExceptionCLRCatcherExecute),
 * ICorProfilerCallback2 8 (ThreadNameChanged .. HandleDestroyed), so
 * ICorProfilerCallback3's first method is 3 + 69 + 8 = 80. Every other slot
 * (up to ICorProfilerCallback11 and beyond) returns S_OK; the object never
 * sets an event mask, so the runtime calls none of them but Shutdown.
 *
 * Each of the three entry points appends one line to the file named by the
 * target's environment variable RTDIAG_PROFILER_OUT:
 *   ENTRY pid PID data CLIENTDATA
 * (CLIENTDATA is the attach's client data, printable ASCII, '?' for other
 * bytes, at most 200 of them; "-" when there is none).
 *
 * Only the CLSID below is served; any other gives CLASS_E_CLASSNOTAVAILABLE,
 * so a test can check that the runtime passes the CLSID through.
 *
 * x86-64 and arm64 Linux: COM methods are plain C functions with the object
 * as first argument (STDMETHODCALLTYPE is empty there), so one function
 * taking no arguments can stand in for every method that only returns S_OK.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int32_t HRESULT;
#define S_OK 0
#define E_POINTER ((HRESULT)0x80004003u)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111u)
#define CLASS_E_NOAGGREGATION ((HRESULT)0x80040110u)

/* {8A1B5C0E-2D3F-4E6A-9B7C-1D2E3F4A5B6C}, in memory (GUID) order */
static const uint8_t my_clsid[16] = {
	0x0E, 0x5C, 0x1B, 0x8A, 0x3F, 0x2D, 0x6A, 0x4E,
	0x9B, 0x7C, 0x1D, 0x2E, 0x3F, 0x4A, 0x5B, 0x6C,
};

typedef void (*slot_fn)(void);

struct object {
	const slot_fn *vtbl;
};

#define NSLOTS 160 /* ICorProfilerCallback11 ends at slot 3+69+8+3+8+1+1+1+2+1+2+1 = 100 */
#define SLOT_INITIALIZE 3
#define SLOT_INITIALIZE_FOR_ATTACH 80
#define SLOT_ATTACH_COMPLETE 81

static void mark(const char *entry, const void *data, uint32_t len)
{
	const char *path = getenv("RTDIAG_PROFILER_OUT");
	if (!path || !*path)
		return;
	char line[512];
	int n = snprintf(line, sizeof(line), "%s pid %ld data ", entry, (long)getpid());
	if (n < 0)
		return;
	const unsigned char *p = data;
	if (!p || !len)
		line[n++] = '-';
	for (uint32_t i = 0; p && i < len && i < 200; i++)
		line[n++] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, (size_t)n);
	(void)w;
	close(fd);
}

static HRESULT ok_any(void)
{
	return S_OK;
}

static HRESULT cb_query_interface(struct object *self, const void *iid, void **out)
{
	(void)iid; /* every IID: IUnknown, ICorProfilerCallback..11 */
	if (!out)
		return E_POINTER;
	*out = self;
	return S_OK;
}

static uint32_t add_ref(struct object *self)
{
	(void)self;
	return 1; /* static objects: nothing to count */
}

static HRESULT cb_initialize(struct object *self, void *info)
{
	(void)self;
	(void)info;
	mark("Initialize", NULL, 0);
	return S_OK;
}

static HRESULT cb_initialize_for_attach(struct object *self, void *info,
					const void *data, uint32_t len)
{
	(void)self;
	(void)info;
	mark("InitializeForAttach", data, len);
	return S_OK;
}

static HRESULT cb_attach_complete(struct object *self)
{
	(void)self;
	mark("ProfilerAttachComplete", NULL, 0);
	return S_OK;
}

static slot_fn cb_vtbl[NSLOTS];
static struct object callback = {cb_vtbl};

static HRESULT cf_create_instance(struct object *self, void *outer,
				  const void *iid, void **out)
{
	(void)self;
	(void)iid;
	if (!out)
		return E_POINTER;
	if (outer)
		return CLASS_E_NOAGGREGATION;
	*out = &callback;
	return S_OK;
}

static slot_fn cf_vtbl[5];
static struct object factory = {cf_vtbl};

__attribute__((constructor)) static void setup(void)
{
	for (int i = 0; i < NSLOTS; i++)
		cb_vtbl[i] = (slot_fn)ok_any;
	cb_vtbl[0] = (slot_fn)cb_query_interface;
	cb_vtbl[1] = (slot_fn)add_ref;
	cb_vtbl[2] = (slot_fn)add_ref; /* Release */
	cb_vtbl[SLOT_INITIALIZE] = (slot_fn)cb_initialize;
	cb_vtbl[SLOT_INITIALIZE_FOR_ATTACH] = (slot_fn)cb_initialize_for_attach;
	cb_vtbl[SLOT_ATTACH_COMPLETE] = (slot_fn)cb_attach_complete;
	cf_vtbl[0] = (slot_fn)cb_query_interface;
	cf_vtbl[1] = (slot_fn)add_ref;
	cf_vtbl[2] = (slot_fn)add_ref;
	cf_vtbl[3] = (slot_fn)cf_create_instance;
	cf_vtbl[4] = (slot_fn)ok_any; /* LockServer */
}

EXPORT HRESULT DllGetClassObject(const void *clsid, const void *iid, void **out)
{
	(void)iid;
	if (!out)
		return E_POINTER;
	if (!clsid || memcmp(clsid, my_clsid, 16) != 0)
		return CLASS_E_CLASSNOTAVAILABLE;
	*out = &factory;
	return S_OK;
}
