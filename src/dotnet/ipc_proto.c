/* SPDX-License-Identifier: MIT */
/*
 * ipc_proto.c - encoding requests and decoding replies of the diagnostics
 * IPC protocol (ipc-protocol.md "Messages", "Payloads"), HRESULTs, GUIDs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/rd.h"
#include "common/textrd.h"
#include "dotnet/ipc_int.h"
#include "rtdiag/ipc_process.h"
#include "rtdiag/ipc_profiler.h"
#include "rtdiag/ipc_providers.h"
#include "rtdiag/ipc_session.h"
#include "rtdiag/source.h"

int ipc_msg_begin(rtd_buf *b, uint8_t set, uint8_t id)
{
	uint8_t h[IPC_HEADER_SIZE] = {0};
	memcpy(h, IPC_MAGIC, sizeof(IPC_MAGIC)); /* includes the NUL */
	h[16] = set;
	h[17] = id;
	rtd_buf_reset(b);
	return rtd_buf_append(b, h, sizeof(h));
}

int ipc_msg_finish(rtd_buf *b)
{
	if (b->len < IPC_HEADER_SIZE)
		return -RTD_E_STATE;
	if (b->len > IPC_MAX_MESSAGE)
		return -RTD_E_CAP;
	b->data[14] = (uint8_t)(b->len & 0xff);
	b->data[15] = (uint8_t)(b->len >> 8);
	return 0;
}

int ipc_put_u8(rtd_buf *b, uint8_t v)
{
	return rtd_buf_append(b, &v, 1);
}

int ipc_put_u32(rtd_buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			(uint8_t)(v >> 24)};
	return rtd_buf_append(b, x, 4);
}

int ipc_put_u64(rtd_buf *b, uint64_t v)
{
	int rc = ipc_put_u32(b, (uint32_t)v);
	return rc ? rc : ipc_put_u32(b, (uint32_t)(v >> 32));
}

int ipc_put_string(rtd_buf *b, const char *utf8)
{
	if (!utf8)
		return ipc_put_u32(b, 0);
	size_t at = b->len;
	int rc = ipc_put_u32(b, 0); /* patched below */
	uint32_t units = 0;
	const unsigned char *s = (const unsigned char *)utf8;
	while (!rc && *s) {
		uint32_t cp = rtd_utf8_next(&s);
		uint8_t u[4];
		size_t n = 2;
		if (cp >= 0x10000) {
			uint32_t v = cp - 0x10000;
			uint16_t hi = (uint16_t)(0xD800 | (v >> 10));
			uint16_t lo = (uint16_t)(0xDC00 | (v & 0x3FF));
			u[0] = (uint8_t)hi;
			u[1] = (uint8_t)(hi >> 8);
			u[2] = (uint8_t)lo;
			u[3] = (uint8_t)(lo >> 8);
			n = 4;
		} else {
			u[0] = (uint8_t)cp;
			u[1] = (uint8_t)(cp >> 8);
		}
		rc = rtd_buf_append(b, u, n);
		units += (uint32_t)(n / 2);
	}
	if (!rc)
		rc = rtd_buf_append(b, "\0\0", 2);
	if (rc)
		return rc;
	units++;
	b->data[at] = (uint8_t)units;
	b->data[at + 1] = (uint8_t)(units >> 8);
	b->data[at + 2] = (uint8_t)(units >> 16);
	b->data[at + 3] = (uint8_t)(units >> 24);
	return 0;
}

int ipc_get_string(rtd_rd *r, char **out)
{
	*out = NULL;
	uint32_t units = rd_u32le(r);
	if (!rd_ok(r))
		return r->err;
	if ((size_t)units * 2 > RTD_CAP_STRING)
		return rd_fail(r, -RTD_E_CAP), -RTD_E_CAP;
	const uint8_t *p;
	if (!rd_bytes(r, (size_t)units * 2, &p))
		return r->err;
	rtd_buf b;
	rtd_buf_init(&b, RTD_CAP_STRING);
	int rc = rtd_utf16le_to_utf8(p, (size_t)units * 2, 1, &b);
	if (!rc)
		rc = rtd_buf_reserve(&b, 1); /* make sure data exists */
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	b.data[b.len] = 0;
	*out = (char *)b.data;
	return 0;
}

int ipc_header_parse(const uint8_t *h, uint8_t *set, uint8_t *id,
		     uint16_t *size)
{
	if (memcmp(h, IPC_MAGIC, sizeof(IPC_MAGIC)) != 0)
		return -RTD_E_IPC_MAGIC;
	*size = (uint16_t)(h[14] | h[15] << 8);
	*set = h[16];
	*id = h[17];
	if (*size < IPC_HEADER_SIZE)
		return -RTD_E_IPC_PROTOCOL;
	return 0;
}

static const struct {
	uint32_t hr;
	const char *name;
	int err;
} hresults[] = {
	{RTD_IPC_HR_BAD_ENCODING, "DS_IPC_E_BAD_ENCODING", RTD_E_IPC_BAD_ENCODING},
	{RTD_IPC_HR_UNKNOWN_COMMAND, "DS_IPC_E_UNKNOWN_COMMAND",
	 RTD_E_IPC_UNKNOWN_COMMAND},
	{RTD_IPC_HR_UNKNOWN_MAGIC, "DS_IPC_E_UNKNOWN_MAGIC",
	 RTD_E_IPC_REJECTED_MAGIC},
	{RTD_IPC_HR_NOTSUPPORTED, "DS_IPC_E_NOTSUPPORTED", RTD_E_IPC_NOTSUPPORTED},
	{RTD_IPC_HR_FAIL, "DS_IPC_E_FAIL", RTD_E_IPC_RUNTIME},
	{RTD_IPC_HR_NOT_YET_AVAILABLE, "DS_IPC_E_NOT_YET_AVAILABLE",
	 RTD_E_IPC_NOT_YET_AVAILABLE},
	{RTD_IPC_HR_RUNTIME_UNINITIALIZED, "DS_IPC_E_RUNTIME_UNINITIALIZED",
	 RTD_E_IPC_UNINITIALIZED},
	{RTD_IPC_HR_INVALIDARG, "DS_IPC_E_INVALIDARG", RTD_E_IPC_INVALIDARG},
	{RTD_IPC_HR_INSUFFICIENT_BUFFER, "DS_IPC_E_INSUFFICIENT_BUFFER",
	 RTD_E_IPC_RUNTIME},
	{RTD_IPC_HR_ENVVAR_NOT_FOUND, "DS_IPC_E_ENVVAR_NOT_FOUND",
	 RTD_E_IPC_ENVVAR_NOT_FOUND},
	/* general HRESULTs commands pass through (a profiler that does not
	 * load, a dump path that cannot be written) */
	{0x8007007Eu, "ERROR_MOD_NOT_FOUND: the library could not be loaded",
	 RTD_E_IPC_RUNTIME},
	{0x80040111u, "CLASS_E_CLASSNOTAVAILABLE: the library's "
	 "DllGetClassObject does not serve that CLSID", RTD_E_IPC_RUNTIME},
	{0x8013136Au, "CORPROF_E_PROFILER_ALREADY_ACTIVE: a profiler is "
	 "already loaded in this process", RTD_E_IPC_RUNTIME},
	{0x80070002u, "ERROR_FILE_NOT_FOUND", RTD_E_IPC_RUNTIME},
	{0x80070003u, "ERROR_PATH_NOT_FOUND", RTD_E_IPC_RUNTIME},
	{0x80070005u, "E_ACCESSDENIED", RTD_E_IPC_RUNTIME},
	{0x8000FFFFu, "E_UNEXPECTED", RTD_E_IPC_RUNTIME},
	{0x80004001u, "E_NOTIMPL", RTD_E_IPC_NOTSUPPORTED},
	{0x8007000Eu, "E_OUTOFMEMORY", RTD_E_IPC_RUNTIME},
};

RTD_API int rtd_ipc_hresult_error(uint32_t hr)
{
	if (!(hr & 0x80000000u))
		return 0;
	for (size_t i = 0; i < sizeof(hresults) / sizeof(hresults[0]); i++)
		if (hresults[i].hr == hr)
			return -hresults[i].err;
	return -RTD_E_IPC_RUNTIME;
}

RTD_API const char *rtd_ipc_hresult_name(uint32_t hr)
{
	for (size_t i = 0; i < sizeof(hresults) / sizeof(hresults[0]); i++)
		if (hresults[i].hr == hr)
			return hresults[i].name;
	return NULL;
}

RTD_API int rtd_ipc_advertise_parse(const void *buf, size_t len,
				    struct rtd_ipc_advertise *adv)
{
	rtd_rd r;
	rd_init(&r, buf, len);
	const uint8_t *magic;
	if (!rd_bytes(&r, 8, &magic))
		return -RTD_E_TRUNCATED;
	if (memcmp(magic, IPC_ADVR_MAGIC, sizeof(IPC_ADVR_MAGIC)) != 0)
		return -RTD_E_IPC_PROTOCOL;
	rd_copy(&r, adv->cookie, 16);
	adv->pid = rd_u64le(&r);
	(void)rd_u16le(&r); /* future */
	return rd_ok(&r) ? 0 : r.err;
}

RTD_API int rtd_ipc_guid_parse(const char *s, uint8_t guid[16])
{
	/* Text order: u32-u16-u16-8 bytes; wire order is little-endian for
	 * the first three fields (a Windows GUID struct). */
	uint8_t t[16];
	int n = 0;
	if (!s)
		return -RTD_E_INVAL;
	size_t len = strlen(s);
	if (len == 38 && s[0] == '{' && s[37] == '}') {
		s++;
		len = 36;
	}
	if (len != 36)
		return -RTD_E_INVAL;
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -RTD_E_INVAL;
			continue;
		}
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return -RTD_E_INVAL;
		t[n++] = (uint8_t)(hi << 4 | lo);
		i++;
	}
	guid[0] = t[3];
	guid[1] = t[2];
	guid[2] = t[1];
	guid[3] = t[0];
	guid[4] = t[5];
	guid[5] = t[4];
	guid[6] = t[7];
	guid[7] = t[6];
	memcpy(guid + 8, t + 8, 8);
	return 0;
}

RTD_API const char *rtd_ipc_guid_format(const uint8_t g[16], char *buf,
					size_t len)
{
	snprintf(buf, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9],
		 g[10], g[11], g[12], g[13], g[14], g[15]);
	return buf;
}

RTD_API void rtd_ipc_process_info_clear(struct rtd_ipc_process_info *pi)
{
	if (!pi)
		return;
	free(pi->cmdline);
	free(pi->os);
	free(pi->arch);
	free(pi->assembly);
	free(pi->clr_version);
	free(pi->rid);
	memset(pi, 0, sizeof(*pi));
}

static char *empty_string(void)
{
	return calloc(1, 1);
}

/*
 * Wire layouts (checked against the runtime's ds-process-protocol.c; the
 * spec's "Details" struct order is wrong, ../shared/reference/README.md):
 *   1: u64 pid, GUID cookie, string cmdline, string os, string arch
 *   2: 1 + string assembly, string clr version
 *   3: u32 version + 2 + string runtime identifier
 */
RTD_API int rtd_ipc_process_info_parse(int version, const void *buf,
				       size_t len,
				       struct rtd_ipc_process_info *out)
{
	rtd_rd r;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (version < 1 || version > 3)
		return -RTD_E_INVAL;
	rd_init(&r, buf, len);
	out->version = version;
	if (version == 3)
		out->info3_version = rd_u32le(&r);
	out->pid = rd_u64le(&r);
	rd_copy(&r, out->cookie, 16);
	if (!rd_ok(&r))
		return r.err;
	if ((rc = ipc_get_string(&r, &out->cmdline)) ||
	    (rc = ipc_get_string(&r, &out->os)) ||
	    (rc = ipc_get_string(&r, &out->arch)))
		goto fail;
	if (version >= 2 && ((rc = ipc_get_string(&r, &out->assembly)) ||
			     (rc = ipc_get_string(&r, &out->clr_version))))
		goto fail;
	if (version >= 3 && (rc = ipc_get_string(&r, &out->rid)))
		goto fail;
	if (!out->assembly)
		out->assembly = empty_string();
	if (!out->clr_version)
		out->clr_version = empty_string();
	if (!out->rid)
		out->rid = empty_string();
	if (!out->assembly || !out->clr_version || !out->rid) {
		rc = -ENOMEM;
		goto fail;
	}
	return 0;
fail:
	rtd_ipc_process_info_clear(out);
	return rc;
}

/* ---- CollectTracing ---------------------------------------------------- */

static bool has_filters(const struct rtd_ipc_session_opts *o)
{
	for (size_t i = 0; i < o->n_providers; i++)
		if (o->providers[i].filter_ids && o->providers[i].n_filter_ids)
			return true;
	return false;
}

static uint64_t rundown_keyword(const struct rtd_ipc_session_opts *o)
{
	if (o->no_rundown)
		return 0;
	return o->rundown_keyword ? o->rundown_keyword : RTD_IPC_RUNDOWN_DEFAULT;
}

RTD_API int rtd_ipc_collect_min_version(const struct rtd_ipc_session_opts *opts)
{
	/* an older caller's struct is read as far as it goes */
	struct rtd_ipc_session_opts oc;
	const struct rtd_ipc_session_opts *o = &oc;
	if (!opts || rtd_opts_copy(&oc, sizeof(oc), opts,
				   RTD_OPTS_END(rtd_ipc_session_opts, filters_optional)))
		return -RTD_E_INVAL;
	if (o->block_mode)
		return 6;
	if (has_filters(o))
		return 5;
	uint64_t rk = rundown_keyword(o);
	if (rk != 0 && rk != RTD_IPC_RUNDOWN_DEFAULT)
		return 4;
	if (o->no_stackwalk)
		return 3;
	if (o->no_rundown)
		return 2;
	return 1;
}

#define PUT(x)                                                         \
	do {                                                                   \
		if (!rc)                                                       \
			rc = (x);                                              \
	} while (0)

RTD_API int rtd_ipc_collect_payload(int version,
				    const struct rtd_ipc_session_opts *opts,
				    uint8_t **out, size_t *outlen)
{
	struct rtd_ipc_session_opts oc;
	const struct rtd_ipc_session_opts *o = &oc;
	*out = NULL;
	*outlen = 0;
	if (version < 1 || version > 6 || !opts ||
	    rtd_opts_copy(&oc, sizeof(oc), opts,
			  RTD_OPTS_END(rtd_ipc_session_opts, filters_optional)) ||
	    !o->providers || o->n_providers == 0)
		return -RTD_E_INVAL;
	if (version < rtd_ipc_collect_min_version(o))
		return -RTD_E_UNSUPPORTED;
	uint32_t buffer_mb = o->buffer_mb ? o->buffer_mb : 256;
	rtd_buf b;
	rtd_buf_init(&b, IPC_MAX_MESSAGE - IPC_HEADER_SIZE);
	int rc = 0;
	if (version >= 5)
		PUT(ipc_put_u32(&b, 0)); /* session_type: streaming */
	PUT(ipc_put_u32(&b, buffer_mb));
	PUT(ipc_put_u32(&b, 1)); /* format: nettrace */
	if (version == 2 || version == 3)
		PUT(ipc_put_u8(&b, o->no_rundown ? 0 : 1));
	if (version >= 4)
		PUT(ipc_put_u64(&b, rundown_keyword(o)));
	if (version >= 3)
		PUT(ipc_put_u8(&b, o->no_stackwalk ? 0 : 1));
	PUT(ipc_put_u32(&b, (uint32_t)o->n_providers));
	for (size_t i = 0; !rc && i < o->n_providers; i++) {
		const struct rtd_ipc_provider *p = &o->providers[i];
		if (!p->name || !*p->name || p->level > 5) {
			rc = -RTD_E_INVAL;
			break;
		}
		PUT(ipc_put_u64(&b, p->keywords));
		PUT(ipc_put_u32(&b, p->level));
		PUT(ipc_put_string(&b, p->name));
		PUT(ipc_put_string(&b, p->args && *p->args ? p->args : NULL));
		if (version >= 5) {
			/* event_filter; "disable, no ids" means no filter */
			bool f = p->filter_ids && p->n_filter_ids;
			PUT(ipc_put_u8(&b, f && p->filter_enable ? 1 : 0));
			PUT(ipc_put_u32(&b, f ? p->n_filter_ids : 0));
			for (uint32_t k = 0; f && k < p->n_filter_ids; k++)
				PUT(ipc_put_u32(&b, p->filter_ids[k]));
		}
	}
	if (version >= 6)
		PUT(ipc_put_u32(&b, o->block_mode ? 1 : 0));
	if (rc) {
		rtd_buf_free(&b);
		return rc;
	}
	*out = b.data;
	*outlen = b.len;
	return 0;
}
